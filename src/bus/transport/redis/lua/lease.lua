-- A partition lease (leases.ts). KEYS[1] the lease; ARGV: holder, ttl ms, op.
-- take: set to the holder when free (or pushed out when the holder has it); renew: pushed out
-- when the holder has it; release: deleted when the holder has it. Returns 1 when the holder
-- has the lease afterwards (take, renew), else 0.
local v = redis.call('GET', KEYS[1])
local op = ARGV[3]
if op == 'release' then
  if v == ARGV[1] then redis.call('DEL', KEYS[1]) end
  return 0
end
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if v or op ~= 'take' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
