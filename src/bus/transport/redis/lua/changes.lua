-- A partition's changes (batch.lua: change) from position ARGV[1] on, at most ARGV[2]: KEYS[1] the
-- list, KEYS[2] how many have been trimmed off its front (a change's position counts those too).
-- Returns {the first one's position, 1 when changes from ARGV[1] on were trimmed away (else 0), how
-- many, the lines joined by '\n'} (thread-store.ts applies them).
local trimmed = tonumber(redis.call('GET', KEYS[2]) or '0')
local from = tonumber(ARGV[1]) - trimmed
local gap = 0
if from < 0 then
  gap = 1
  from = 0
end
local items = redis.call('LRANGE', KEYS[1], from, from + tonumber(ARGV[2]) - 1)
return {trimmed + from, gap, #items, table.concat(items, '\n')}
