-- A shared rate limit (shared-state.ts).
-- Token bucket, on Redis's own clock (daemons' clocks may differ). KEYS: bucket. ARGV: capacity,
-- tokens per ms, ttl ms. Returns 0 when a token was taken, else ms until one is available (-1: never).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'last', 'cap', 'rate')
local tokens = tonumber(b[1])
local last = tonumber(b[2])
if tokens == nil or b[3] ~= ARGV[1] or b[4] ~= ARGV[2] then
  tokens = cap
  last = now
end
tokens = math.min(cap, tokens + math.max(0, now - last) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
elseif rate > 0 then
  wait = math.ceil((1 - tokens) / rate)
else
  wait = -1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'last', tostring(now), 'cap', ARGV[1], 'rate', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return wait
