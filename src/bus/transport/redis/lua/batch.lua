-- The command batch (batch.ts): every command a daemon's bus sends Redis in one turn of the event loop.
-- ARGV[1..11] is a header (see CommandBatch.header), then operations, each an opcode and its
-- arguments; keys are 1-based KEYS indexes (every key carries the organism's hash tag, so one
-- script may touch them all on a cluster too). Returns {results, errors, failed XADDs}: one result
-- per settle / load / read / xack / beat in queue order (a failure as '!<message>'), the errors of
-- the operations that return nothing, and for each XADD that failed (of an xadd, pub or send) its
-- number among the call's XADDs and the message. An XADD that went returns nothing (a turn's 30
-- results of 1 cost the daemon's reply decoder about a microsecond each). History entries, idle
-- and stop notices are announced with one PUBLISH at the end: the origin line, then one line each.
-- Several partitions in one call (partitioned-batch.ts): KEYS are the first partition's, and each
-- further partition's operations follow a 'part' operation that names its keys and prefixes. On a
-- cluster an 'own' operation comes first: when a key it names is not served here (a slot moved),
-- the script answers 'moved' having done nothing, and the daemon sends each partition on its own.
local CHANNEL, ORIGIN, GROUP, CONSUMER, PREFIX = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local HIST_MAX, HIST_TTL, THREAD_TTL, VERSION = tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9]
local FOLLOWING, HPREFIX = ARGV[10], ARGV[11]
-- A history list is trimmed when it is this much over its length (reset() keeps the newest anyway).
local HIST_SLACK = math.max(8, math.floor(HIST_MAX / 4))
local out, errs, events = {}, {}, {}
-- XADDs run so far, and the number and message of each that failed.
local xadds, failed = 0, {}
-- Numbers are handed to redis.call as strings: Redis formats a Lua number argument with
-- printf's %.17g, about half a microsecond a call (more than the HINCRBY itself costs).
-- The current partition's keys: KEYS, or those its 'part' operation names, found by the index
-- string ARGV carries; `named` keeps each one found (tonumber is a strtod, and a key is named
-- by several operations of a call: a turn's XADDs name the same stream).
local K = KEYS
local named = {}
local function key(i)
  local a = ARGV[i]
  local k = named[a]
  if not k then
    k = K[tonumber(a)]
    named[a] = k
  end
  return k
end
-- Now in ms, asked of Redis once per call, when first needed.
local NOW
local function now()
  if not NOW then
    local t = redis.call('TIME')
    NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return NOW
end
-- Whether some daemon follows the thread live (hash field w: until when, epoch ms). Asked of a
-- thread only while any thread is followed at all (the FOLLOWING key exists; asked once per call).
local anyFollowed
local function followed(thread)
  if anyFollowed == nil then anyFollowed = FOLLOWING ~= '' and redis.call('EXISTS', FOLLOWING) == 1 end
  if not anyFollowed then return false end
  local w = redis.call('HGET', thread, 'w')
  return w ~= false and tonumber(w) > now()
end
-- thread key, until (epoch ms), ms: the thread is followed until then, and FOLLOWING lives that long.
local function follow(i)
  redis.call('HSET', key(i + 1), 'w', ARGV[i + 2])
  redis.call('SET', FOLLOWING, '1', 'PX', ARGV[i + 3])
end
-- A thread key's id as JSON (made once per key per call): events name their thread.
local ids = {}
local function idJson(k)
  local j = ids[k]
  if not j then
    j = cjson.encode(string.sub(k, #PREFIX + 1))
    ids[k] = j
  end
  return j
end
local function msg(e)
  if type(e) == 'table' and e.err then return e.err end
  return tostring(e)
end
local function hset(i) redis.call('HSET', key(i + 1), ARGV[i + 2], ARGV[i + 3]) end
-- The current partition's changes list (BusKeys.changes): a frame record deleted or a thread
-- stopped, one line each, 'p|<frame>|<thread>' or 's||<thread>', which a daemon's copy of a thread
-- must not miss. Every reader reads them behind its entries (lua/changes.lua), so a delivery may go
-- on the daemon's copy instead of reading the thread (thread-store.ts). Kept to the last 2,000 to
-- 4,000 (a reader reads them every turn; one that fell further behind reads its threads again);
-- `<list>:trimmed` counts what was cut off the front, so a position means the same for good.
local function changesKey() return string.sub(PREFIX, 1, #PREFIX - 7) .. 'changes' end
local CHANGES = changesKey()
local function change(kind, frame, thread)
  local len = redis.call('RPUSH', CHANGES, kind .. '|' .. frame .. '|' .. thread)
  if len > 4000 then
    redis.call('LTRIM', CHANGES, '-2000', '-1')
    redis.call('INCRBY', CHANGES .. ':trimmed', len - 2000)
  end
end
-- thread key, frame id: the frame's record deleted; when there was one, a change.
local function prune(i)
  local k = key(i + 1)
  if redis.call('HDEL', k, 'f:' .. ARGV[i + 2]) == 1 then
    change('p', ARGV[i + 2], string.sub(k, #PREFIX + 1))
  end
end
-- thread key: the thread stopped (a change, and a notice for the other daemons' watchers).
local function stop(i)
  local k = key(i + 1)
  redis.call('HSET', k, 'stopped', '1')
  change('s', '', string.sub(k, #PREFIX + 1))
  events[#events + 1] = '{"t":' .. idJson(k) .. ',"k":"s"}'
end
local function pexpire(i) redis.call('PEXPIRE', key(i + 1), ARGV[i + 2]) end
-- One more hop in the thread. The expiry is set when asked and when the hash is new (this
-- increment may have just made it, and it must not live forever).
local function countHop(k, refresh)
  if redis.call('HINCRBY', k, 'hops', '1') == 1 or refresh == '1' then redis.call('PEXPIRE', k, THREAD_TTL) end
end
-- thread key, n: n more messages in flight (the sum of a batch's publishes and settles of the
-- thread that it could net out, see CommandBatch.settle).
local function inc(i)
  local k = key(i + 1)
  local n = ARGV[i + 2]
  if redis.call('HINCRBY', k, 'inflight', n) == tonumber(n) then redis.call('PEXPIRE', k, THREAD_TTL) end
end
-- A thread key's history list key.
local function historyKey(thread) return HPREFIX .. string.sub(thread, #PREFIX + 1) end
-- How many history entries a thread has had: its list's length, and the entries trimmed off it
-- (hash field trimmed). Counted when asked rather than at every entry: a command less per hop.
local function historyCount(thread, trimmed)
  return redis.call('LLEN', historyKey(thread)) + (tonumber(trimmed) or 0)
end
-- The entry is appended to the thread's history list (numbered: see historyCount) and, while
-- some daemon follows the thread live (hash field w: until when, epoch ms), announced as
-- '<n>|{"t":<thread>,"k":"m","e":<entry>}', so a daemon can tell it missed one. Nobody else needs
-- it as it happens: a daemon reads a thread's history when it needs all of it.
local function appendHistory(thread, entry, refresh)
  local k = historyKey(thread)
  local len = redis.call('RPUSH', k, entry)
  if len > HIST_MAX + HIST_SLACK then
    redis.call('LTRIM', k, '-' .. ARGV[6], '-1')
    -- Not for a thread that is gone: the increment would make its hash up.
    if redis.call('EXISTS', thread) == 1 then redis.call('HINCRBY', thread, 'trimmed', len - HIST_MAX) end
  end
  if len == 1 or refresh == '1' then redis.call('PEXPIRE', k, HIST_TTL) end
  if followed(thread) then
    local n = historyCount(thread, redis.call('HGET', thread, 'trimmed'))
    events[#events + 1] = n .. '|{"t":' .. idJson(thread) .. ',"k":"m","e":' .. entry .. '}'
  end
end
-- stream key, message record (JSON)
local function xadd(i)
  redis.call('XADD', key(i + 1), '*', 'v', VERSION, 'm', ARGV[i + 2])
  return 1
end
-- thread key, frame field, frame record, hop, history entry, history refresh, stream key, message
-- record: what the bus writes for one message it publishes, in its order: the frame opened for it,
-- the hop, the history entry, then the XADD. A part it did not write is '' (hop: '0', or '1' to
-- push out the thread's expiry too). A failed write is reported and the XADD still goes.
local function pubWrites(i)
  local k = key(i + 1)
  if ARGV[i + 2] ~= '' then redis.call('HSET', k, ARGV[i + 2], ARGV[i + 3]) end
  if ARGV[i + 4] ~= '' then countHop(k, ARGV[i + 4]) end
  if ARGV[i + 5] ~= '' then appendHistory(k, ARGV[i + 5], ARGV[i + 6]) end
end
local function pub(i)
  local ok, e = pcall(pubWrites, i)
  if not ok then errs[#errs + 1] = 'pub: ' .. msg(e) end
  if ARGV[i + 7] ~= '' then return xadd(i + 6) end
end
-- thread key, refresh, history entry, stream key, message record: a pub of a message that opens
-- no frame here (most sends), in six arguments rather than nine (each costs Redis about 0.15 µs
-- to take apart). refresh: '0', or '1' to push out the thread's expiry, '2' the history list's,
-- '3' both.
local function sendWrites(i)
  local k, refresh = key(i + 1), ARGV[i + 2]
  countHop(k, (refresh == '1' or refresh == '3') and '1' or '0')
  appendHistory(k, ARGV[i + 3], (refresh == '2' or refresh == '3') and '1' or '0')
end
local function send(i)
  local ok, e = pcall(sendWrites, i)
  if not ok then errs[#errs + 1] = 'pub: ' .. msg(e) end
  return xadd(i + 3)
end
-- thread key: in-flight count minus one; at zero an idle notice goes out, with how many history
-- entries the thread has (n), so a daemon following it can make its copy whole first.
local function settle(i)
  local k = key(i + 1)
  local left = redis.call('HINCRBY', k, 'inflight', '-1')
  if left > 0 then return left end
  if left < 0 then
    if redis.call('HLEN', k) == 1 then
      redis.call('DEL', k) -- the thread was gone: this decrement made the hash
      return 0
    end
    redis.call('HSET', k, 'inflight', '0')
  end
  local n = historyCount(k, redis.call('HGET', k, 'trimmed'))
  events[#events + 1] = '{"t":' .. idJson(k) .. ',"k":"i","n":' .. n .. '}'
  return 0
end
-- A thread's record as eight values: created, scope, hops, stopped, inflight, frame, parent
-- frame, history count (`hkey`: its history list; false: '' for the count, which only agents and
-- threads followed live need, see read); nothing when the thread does not exist.
local function recordOf(k, hkey, refresh, frame)
  local v
  if hkey then
    v = redis.call('HMGET', k, 'created', 'scope', 'hops', 'stopped', 'inflight', 'f:' .. frame, 'trimmed')
  else
    v = redis.call('HMGET', k, 'created', 'scope', 'hops', 'stopped', 'inflight', 'f:' .. frame)
  end
  if not v[1] then return end
  local f = frame ~= '' and v[6] or false
  local p = false
  if f then
    -- The record is JSON.stringify([listener, caller, parent, depth]) of names and ids that need
    -- no escapes; a record that does not look so plain is decoded properly.
    local parent = string.match(f, '^%["[^"\]*","[^"\]*","([^"\]*)",')
    if not parent then parent = cjson.decode(f)[3] end
    if parent ~= '' then p = redis.call('HGET', k, 'f:' .. parent) end
  end
  if refresh == '1' then redis.call('PEXPIRE', k, THREAD_TTL) end
  local n = ''
  -- %d: tostring formats with %.14g, twice the time.
  if hkey then n = string.format('%d', redis.call('LLEN', hkey) + (tonumber(v[7]) or 0)) end
  return v[1], v[2], v[3], v[4], v[5] or '0', f, p, n
end
-- The record as a table {created, ..., history count}, or false.
local function record(k, refresh, frame)
  local created, scope, hops, stopped, inflight, f, p, n = recordOf(k, historyKey(k), refresh, frame)
  if not created then return false end
  return {created, scope, hops, stopped, inflight, f, p, n}
end
-- thread key, refresh, frame id (or ''): the thread's record, with the frame and its parent.
local function load(i) return record(key(i + 1), ARGV[i + 2], ARGV[i + 3]) end
-- stream key, count, history ('1': each thread's history count too, which only a listener that
-- reads its threads' histories needs, an agent; the LLEN is a command a hop, and a thread followed
-- live on a daemon that read it without gets it by a load, see RedisThreadStore): XREADGROUP
-- without BLOCK. Entries come back in one flat list, three values each (a table per entry cost
-- Redis about 3% of a call-and-answer message to turn into its reply). An entry in this format
-- comes back as id, m, state: its record, and with a thread key prefix its thread state: the
-- thread and frame taken from the start of the record (codec.ts writes id, thread, frame first;
-- the daemon checks that they are the decoded message's own), the state packed in one string
-- (fields of the record joined by NUL, '' for a missing frame; '0' when the thread does not
-- exist), so that a hop's reply is three strings instead of fifteen. A message that carries its
-- frame (a frameDepth key, which codec.ts writes last) comes back with no state: a daemon that
-- knows its thread needs none, and one that does not loads it (RedisThreadStore.loadFor); the
-- read costs Redis about a sixth less per hop. Any other entry comes back as id, fields, false,
-- for the daemon to refuse.
-- Thread keys are made here, not declared: they carry the stream key's hash tag, so its slot.
local function read(i)
  local reply = redis.call('XREADGROUP', 'GROUP', GROUP, CONSUMER, 'COUNT', ARGV[i + 2],
    'STREAMS', key(i + 1), '>')
  if not reply then return {} end
  local counted = ARGV[i + 3] == '1'
  local entries = reply[1][2]
  local list, at = {}, 0
  for j = 1, #entries do
    local id, fields = entries[j][1], entries[j][2]
    local m
    if fields and #fields == 4 and fields[1] == 'v' and fields[2] == VERSION and fields[3] == 'm' then
      m = fields[4]
    end
    if m then
      local state = false
      if PREFIX ~= '' then
        local t, f = string.match(m, '^{"id":"[^"\]*","thread":"([^"\]*)","frame":"([^"\]*)"')
        if t and not string.find(m, ',"frameDepth":', 1, true) then
          -- Packed with one concatenation: no table per entry, and the history key made from t.
          local c, s, h, st, inf, fr, p, n = recordOf(PREFIX .. t, counted and HPREFIX .. t, '0', f)
          if c then
            state = c .. '\0' .. (s or '') .. '\0' .. (h or '') .. '\0' .. (st or '') .. '\0' .. inf .. '\0' ..
              (fr or '') .. '\0' .. (p or '') .. '\0' .. n
          else
            state = '0'
          end
        end
      end
      list[at + 1], list[at + 2], list[at + 3] = id, m, state
    else
      list[at + 1], list[at + 2], list[at + 3] = id, fields or false, false
    end
    at = at + 3
  end
  return list
end
-- stream key, n, n ids
local function xack(i)
  local n = tonumber(ARGV[i + 2])
  local acked = 0
  for j = i + 3, i + 2 + n, 500 do
    acked = acked + redis.call('XACK', key(i + 1), GROUP, unpack(ARGV, j, math.min(j + 499, i + 2 + n)))
  end
  return acked
end
-- stream key, n, n ids: the entries this daemon holds there (the heartbeat, heartbeat.ts). Each
-- one still pending for this consumer is marked alive (XCLAIM to itself with JUSTID: idle time
-- reset, no delivery counted); returns the ids another consumer owns now, each followed by its
-- owner. One no longer pending (acknowledged, its ack on its way back) is skipped.
local function beat(i)
  local k = key(i + 1)
  local mine = {k, GROUP, CONSUMER, '0'}
  local taken = {}
  for j = i + 3, i + 2 + tonumber(ARGV[i + 2]) do
    local row = redis.call('XPENDING', k, GROUP, ARGV[j], ARGV[j], '1')[1]
    if row then
      if row[2] == CONSUMER then
        mine[#mine + 1] = ARGV[j]
      else
        taken[#taken + 1] = ARGV[j]
        taken[#taken + 1] = row[2]
      end
    end
  end
  if #mine > 4 then
    mine[#mine + 1] = 'JUSTID'
    redis.call('XCLAIM', unpack(mine))
  end
  return taken
end

local i = 12
local n = #ARGV
-- own, n, n keys: one key of each further partition; any not served here and nothing is done.
if ARGV[12] == 'own' then
  local count = tonumber(ARGV[13])
  for j = 14, 13 + count do
    local r = redis.pcall('EXISTS', ARGV[j])
    if type(r) == 'table' and r.err then return 'moved' end
  end
  i = 14 + count
end
-- part, n, prefix, following key, history prefix, n keys: the operations after it are that partition's.
local function part(j)
  local count = tonumber(ARGV[j + 1])
  PREFIX, FOLLOWING, HPREFIX = ARGV[j + 2], ARGV[j + 3], ARGV[j + 4]
  CHANGES = changesKey()
  anyFollowed = nil
  K = {}
  named = {}
  for k = 1, count do K[k] = ARGV[j + 4 + k] end
  return 5 + count
end
while i <= n do
  local op = ARGV[i]
  local f, size, result
  if op == 'part' then size = part(i)
  elseif op == 'send' then f, size, result = send, 6, 'x'
  elseif op == 'pub' then f, size, result = pub, 9, ARGV[i + 7] ~= '' and 'x'
  elseif op == 'inc' then f, size = inc, 3
  elseif op == 'xadd' then f, size, result = xadd, 3, 'x'
  elseif op == 'settle' then f, size, result = settle, 2, true
  elseif op == 'read' then f, size, result = read, 4, true
  elseif op == 'hset' then f, size = hset, 4
  elseif op == 'prune' then f, size = prune, 3
  elseif op == 'stop' then f, size = stop, 2
  elseif op == 'load' then f, size, result = load, 4, true
  elseif op == 'xack' then f, size, result = xack, 3 + tonumber(ARGV[i + 2]), true
  elseif op == 'beat' then f, size, result = beat, 3 + tonumber(ARGV[i + 2]), true
  elseif op == 'pexpire' then f, size = pexpire, 3
  elseif op == 'follow' then f, size = follow, 4
  elseif op == 'event' then events[#events + 1] = ARGV[i + 1]; size = 2
  else return redis.error_reply('unknown batch op ' .. tostring(op)) end
  if f then
    local ok, value = pcall(f, i)
    if result == 'x' then
      xadds = xadds + 1
      if not ok then
        failed[#failed + 1] = xadds
        failed[#failed + 1] = msg(value)
      end
    elseif result then
      if ok then out[#out + 1] = value else out[#out + 1] = '!' .. msg(value) end
    elseif not ok then
      errs[#errs + 1] = op .. ': ' .. msg(value)
    end
  end
  i = i + size
end
if #events > 0 then
  redis.call('PUBLISH', CHANNEL, ORIGIN .. '\n' .. table.concat(events, '\n'))
end
return {out, errs, failed}
