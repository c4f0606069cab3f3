-- The daemons reading a listener (leases.ts). KEYS[1] a sorted set of names by last heartbeat
-- (Redis's clock, so the daemons' clocks need not agree); ARGV: name, ttl ms, op.
-- join: marks the name alive now, forgets names not marked for ttl, returns the live names.
-- leave: removes the name.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[3] == 'leave' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {}
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 10)
return redis.call('ZRANGE', KEYS[1], 0, -1)
