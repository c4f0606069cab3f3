-- Moves one entry to the dead-letter stream (dead-letter.ts, reaper.ts).
-- KEYS: stream, dead, dead count, failure reason. ARGV: group, entry id, listener, deliveries,
-- reason, max length, consumer. Returns false when another daemon moved it first, else {1, body}.
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return false end
local reason = ARGV[5]
local failure = redis.call('GET', KEYS[4])
if failure then reason = reason .. '; last failure: ' .. failure end
local entry = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
local body = ''
local raw = ''
if entry[1] then
  local fields = entry[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'm' then body = fields[i + 1] end
  end
  if body == '' then raw = cjson.encode(fields) end
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*',
  'listener', ARGV[3], 'entry', ARGV[2], 'deliveries', ARGV[4], 'reason', reason,
  'consumer', ARGV[7], 'm', body, 'raw', raw)
redis.call('INCR', KEYS[3])
redis.call('DEL', KEYS[4])
return {1, body}
