/**
 * Every command a daemon's bus sends Redis in one turn of the event loop, as one script call.
 *
 * A hop used to cost five commands (load the thread, write its state, XADD, settle, XACK), each an
 * ioredis command with its own promise, reply and socket write; on a box where the daemons, not
 * Redis, are the bottleneck that overhead was most of a hop's cost. Here the thread store, the
 * transport and the readers queue operations (state writes, XADDs, reads with the thread state of
 * what they read, settles, XACKs), and what is queued when the current turn ends (setImmediate) goes
 * as one EVALSHA: a batch of 16 hops is one command. Each operation is named for what the bus does
 * (a hop charged, a message published, ...) and takes few arguments, since every argument costs
 * the daemon time to encode and Redis time to take apart.
 *
 * Ordering is what the bus relies on: operations run in the order they were queued, so a message's
 * thread state is written in the same script as, and before, the XADD that publishes it, and a load
 * or a read sees this daemon's own earlier writes. Batches go in order on one connection. XACKs go
 * last in their batch: a reader queues one once the handler has finished, behind its outputs'
 * XADDs, so the two land in Redis together.
 *
 * Each operation runs under pcall: one that fails (a key of the wrong type, say) rejects its own
 * promise or is reported through `onError`, and the rest of the batch still runs.
 */
import type { Redis } from 'ioredis';

/**
 * ARGV[1..11] is a header (see CommandBatch.header), then operations, each an opcode and its
 * arguments; keys are 1-based KEYS indexes (every key carries the organism's hash tag, so one
 * script may touch them all on a cluster too). Returns {results, errors}: one result per xadd /
 * settle / load / read / xack / beat in queue order (a failure as '!<message>'), and the errors of the
 * operations that return nothing. History entries, idle and stop notices are announced with one
 * PUBLISH at the end: the origin line, then one line each.
 */
const BATCH_SCRIPT = `
local CHANNEL, ORIGIN, GROUP, CONSUMER, PREFIX = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local HIST_MAX, HIST_TTL, THREAD_TTL, VERSION = tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9]
local FOLLOWING, HPREFIX = ARGV[10], ARGV[11]
-- A history list is trimmed when it is this much over its length (reset() keeps the newest anyway).
local HIST_SLACK = math.max(8, math.floor(HIST_MAX / 4))
local out, errs, events = {}, {}, {}
local function key(i) return KEYS[tonumber(ARGV[i])] end
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
local function hdel(i) redis.call('HDEL', key(i + 1), ARGV[i + 2]) end
local function pexpire(i) redis.call('PEXPIRE', key(i + 1), ARGV[i + 2]) end
-- One more hop in the thread. The expiry is set when asked and when the hash is new (this
-- increment may have just made it, and it must not live forever).
local function countHop(k, refresh)
  if redis.call('HINCRBY', k, 'hops', 1) == 1 or refresh == '1' then redis.call('PEXPIRE', k, THREAD_TTL) end
end
-- thread key, n: n more messages in flight (the sum of a batch's publishes and settles of the
-- thread that it could net out, see CommandBatch.settle).
local function inc(i)
  local k = key(i + 1)
  local n = tonumber(ARGV[i + 2])
  if redis.call('HINCRBY', k, 'inflight', n) == n then redis.call('PEXPIRE', k, THREAD_TTL) end
end
-- The entry is appended to the thread's history list and numbered in its thread (hash field hist;
-- 0 when the thread is gone) and, while some daemon follows the thread live (hash field w: until
-- when, epoch ms), announced as '<n>|{"t":<thread>,"k":"m","e":<entry>}', so a daemon can tell it
-- missed one. Nobody else needs it as it happens: a daemon reads a thread's history when it
-- needs all of it.
local function appendHistory(thread, entry, refresh)
  local k = HPREFIX .. string.sub(thread, #PREFIX + 1)
  local len = redis.call('RPUSH', k, entry)
  local n = redis.call('HINCRBY', thread, 'hist', 1)
  if n == 1 and redis.call('HLEN', thread) == 1 then
    redis.call('DEL', thread)
    n = 0
  end
  if len > HIST_MAX + HIST_SLACK then redis.call('LTRIM', k, -HIST_MAX, -1) end
  if len == 1 or refresh == '1' then redis.call('PEXPIRE', k, HIST_TTL) end
  if n > 0 and followed(thread) then
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
-- thread key: in-flight count minus one; at zero an idle notice goes out, with how many history
-- entries the thread has (n), so a daemon following it can make its copy whole first.
local function settle(i)
  local k = key(i + 1)
  local left = redis.call('HINCRBY', k, 'inflight', -1)
  if left > 0 then return left end
  if left < 0 then
    if redis.call('HLEN', k) == 1 then
      redis.call('DEL', k) -- the thread was gone: this decrement made the hash
      return 0
    end
    redis.call('HSET', k, 'inflight', 0)
  end
  events[#events + 1] = '{"t":' .. idJson(k) .. ',"k":"i","n":' .. (redis.call('HGET', k, 'hist') or '0') .. '}'
  return 0
end
-- A thread's record: {created, scope, hops, stopped, inflight, frame, parent frame, hist}, or false.
local function record(k, refresh, frame)
  local v
  if frame ~= '' then
    v = redis.call('HMGET', k, 'created', 'scope', 'hops', 'stopped', 'inflight', 'hist', 'f:' .. frame)
  else
    v = redis.call('HMGET', k, 'created', 'scope', 'hops', 'stopped', 'inflight', 'hist')
  end
  if not v[1] then return false end
  local f = v[7] or false
  local p = false
  if f then
    -- The record is JSON.stringify([listener, caller, parent, depth]) of names and ids that need
    -- no escapes; a record that does not look so plain is decoded properly.
    local parent = string.match(f, '^%["[^"\\]*","[^"\\]*","([^"\\]*)",')
    if not parent then parent = cjson.decode(f)[3] end
    if parent ~= '' then p = redis.call('HGET', k, 'f:' .. parent) end
  end
  if refresh == '1' then redis.call('PEXPIRE', k, THREAD_TTL) end
  return {v[1], v[2], v[3], v[4], v[5] or '0', f, p, v[6] or '0'}
end
-- thread key, refresh, frame id (or ''): the thread's record, with the frame and its parent.
local function load(i) return record(key(i + 1), ARGV[i + 2], ARGV[i + 3]) end
-- stream key, count: XREADGROUP without BLOCK. An entry in this format comes back as {id, m, state}:
-- its record, and with a thread key prefix its thread state: the thread and frame taken from the
-- start of the record (codec.ts writes id, thread, frame first; the daemon checks that they are the
-- decoded message's own), the state packed in one string (fields of the record joined by NUL,
-- '' for a missing frame; '0' when the thread does not exist), so that a hop's reply is three
-- strings instead of fifteen. A message that carries its frame (a frameDepth key, which codec.ts
-- writes last) comes back with no state: a daemon that knows its thread needs none, and one that
-- does not loads it (RedisThreadStore.loadFor); the read costs Redis about a sixth less per hop.
-- Any other entry comes back as {id, fields}, for the daemon to refuse.
-- Thread keys are made here, not declared: they carry the stream key's hash tag, so its slot.
local function read(i)
  local reply = redis.call('XREADGROUP', 'GROUP', GROUP, CONSUMER, 'COUNT', ARGV[i + 2],
    'STREAMS', key(i + 1), '>')
  if not reply then return {} end
  local entries = reply[1][2]
  local list = {}
  for j = 1, #entries do
    local id, fields = entries[j][1], entries[j][2]
    local m
    if fields and #fields == 4 and fields[1] == 'v' and fields[2] == VERSION and fields[3] == 'm' then
      m = fields[4]
    end
    if m then
      local state = false
      if PREFIX ~= '' then
        local t, f = string.match(m, '^{"id":"[^"\\]*","thread":"([^"\\]*)","frame":"([^"\\]*)"')
        if t and not string.find(m, ',"frameDepth":', 1, true) then
          local r = record(PREFIX .. t, '0', f)
          if r then
            state = table.concat({r[1], r[2] or '', r[3] or '', r[4] or '', r[5], r[6] or '', r[7] or '', r[8]}, '\\0')
          else
            state = '0'
          end
        end
      end
      list[j] = {id, m, state}
    else
      list[j] = {id, fields or false}
    end
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
    local row = redis.call('XPENDING', k, GROUP, ARGV[j], ARGV[j], 1)[1]
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
while i <= n do
  local op = ARGV[i]
  local f, size, result
  if op == 'pub' then f, size, result = pub, 9, ARGV[i + 7] ~= ''
  elseif op == 'inc' then f, size = inc, 3
  elseif op == 'xadd' then f, size, result = xadd, 3, true
  elseif op == 'settle' then f, size, result = settle, 2, true
  elseif op == 'read' then f, size, result = read, 3, true
  elseif op == 'hset' then f, size = hset, 4
  elseif op == 'hdel' then f, size = hdel, 3
  elseif op == 'load' then f, size, result = load, 4, true
  elseif op == 'xack' then f, size, result = xack, 3 + tonumber(ARGV[i + 2]), true
  elseif op == 'beat' then f, size, result = beat, 3 + tonumber(ARGV[i + 2]), true
  elseif op == 'pexpire' then f, size = pexpire, 3
  elseif op == 'follow' then f, size = follow, 4
  elseif op == 'event' then events[#events + 1] = ARGV[i + 1]; size = 2
  else return redis.error_reply('unknown batch op ' .. tostring(op)) end
  if f then
    local ok, value = pcall(f, i)
    if result then
      if ok then out[#out + 1] = value else out[#out + 1] = '!' .. msg(value) end
    elseif not ok then
      errs[#errs + 1] = op .. ': ' .. msg(value)
    end
  end
  i = i + size
end
if #events > 0 then
  redis.call('PUBLISH', CHANNEL, ORIGIN .. '\\n' .. table.concat(events, '\\n'))
end
return {out, errs}
`;

const ONE = Promise.resolve(1);

/** A batch is sent early once it holds this many arguments (bounds the call's stack and script time). */
const MAX_ARGS = 1_000;

/** A thread's record as the load operation returns it (see RedisThreadStore.load). */
export type LoadReply = (string | null)[] | null;

export type StreamEntry = [id: string, fields: string[] | null];

/**
 * One entry a read returns: `[id, record JSON, thread state]` for an entry in this format (thread
 * state null when none was loaded, see unpackState), or `[id, fields]` for any other, as XREADGROUP
 * gives it, for the reader to refuse with the reason.
 */
export type ReadEntry =
  | [id: string, body: string, state: string | null]
  | [id: string, fields: string[] | null];

/**
 * The thread state the read script packed for an entry, as a load returns it; undefined when it
 * loaded none (no thread settings, or a thread id it could not take from the record).
 */
export function unpackState(state: string | null | undefined): LoadReply | undefined {
  if (state == null) return undefined;
  if (state === '0') return null;
  const f = state.split('\0');
  return [f[0]!, f[1]!, f[2]!, f[3]!, f[4]!, f[5] || null, f[6] || null, f[7]!];
}

type Reply = number | LoadReply | ReadEntry[] | string[];

interface Waiter {
  resolve(value: Reply): void;
  reject(error: Error): void;
}

type BatchClient = Redis & {
  organismBatch(numKeys: number, ...args: string[]): Promise<[Array<Reply | string>, string[]]>;
};

export interface CommandBatchOptions {
  /** Pub/sub channel for history entries, idle and stop notices. */
  channel: string;
  /** First line of each events message: who sent it, so a daemon skips its own without parsing. */
  origin: string;
  /** Consumer group and this daemon's consumer name, for reads and acks. */
  group: string;
  consumer: string;
  /** The stream entry format version XADD writes (codec.ts). */
  formatVersion: string;
  /** Failures of operations that have no promise (state writes), and of whole batches. */
  onError(error: Error): void;
}

/** What the shared thread store sets (RedisThreadStore): reads then bring thread state along. */
export interface ThreadSettings {
  /** Key of thread `<id>` is this prefix plus the id. */
  threadPrefix: string;
  /** Key that exists while any thread is followed live. */
  followingKey: string;
  /** Key of thread `<id>`'s history list is this prefix plus the id. */
  historyPrefix: string;
  /** Thread hash time to live, ms. */
  threadTtlMs: number;
  /** History entries kept per thread, and how long a history list lives, ms. */
  historyMax: number;
  historyTtlMs: number;
}

export class CommandBatch {
  private readonly client: BatchClient;
  private header: string[];
  private keys: string[] = [];
  private keyIndex = new Map<string, string>();
  private args: string[] = [];
  private waiters: Waiter[] = [];
  /** XACKs by stream: one XACK per stream per batch, after everything else. */
  private acks = new Map<string, { ids: string[]; waiters: Waiter[] }>();
  /**
   * Reads wait for the end of the turn: a part of the batch sent early (it filled up) carries
   * the writes so far, and the reads go with the rest, taking as many entries as are wanted then.
   */
  private reads: Array<{ stream: string; count: number | (() => number); waiter: Waiter }> = [];
  /**
   * Messages published (+1) per thread key in this batch, less settles netted out against them;
   * sent first in the batch. An increment may move ahead of a settle queued before it: the count
   * then never touches zero in between, so no idle notice goes out for a thread that is busy again.
   */
  private inFlightDeltas = new Map<string, number>();
  /**
   * The writes of a message being published (its frame, its hop, its history entry: they come in
   * that order), held back to go as one `pub` operation with the XADD that follows them. `stage`
   * is the last part written; see publishing().
   */
  private open: string[] | undefined;
  private openStage = 0;
  private scheduled: NodeJS.Immediate | undefined;
  /** The last batch sent, settled when Redis answered it (batches are answered in order). */
  private last: Promise<unknown> = Promise.resolve();

  constructor(
    client: Redis,
    private readonly options: CommandBatchOptions,
  ) {
    this.client = client as BatchClient;
    if (!(client as unknown as Partial<BatchClient>).organismBatch) {
      client.defineCommand('organismBatch', { lua: BATCH_SCRIPT });
    }
    this.header = this.makeHeader(undefined);
  }

  /** Turns on thread state with reads (the shared thread store calls it once). */
  useThreads(settings: ThreadSettings): void {
    this.header = this.makeHeader(settings);
  }

  /** Whether anything is queued and not yet sent. */
  get pending(): boolean {
    return (
      this.args.length > 0 ||
      this.open !== undefined ||
      this.acks.size > 0 ||
      this.reads.length > 0 ||
      this.inFlightDeltas.size > 0
    );
  }

  hset(key: string, field: string, value: string): void {
    this.push3('hset', this.key(key), field, value);
  }

  hdel(key: string, field: string): void {
    this.push2('hdel', this.key(key), field);
  }

  pexpire(key: string, ms: string): void {
    this.push2('pexpire', this.key(key), ms);
  }

  /** The thread is followed live until `until` (epoch ms): its history entries are announced. */
  follow(threadKey: string, until: number, ms: number): void {
    this.push3('follow', this.key(threadKey), String(until), String(ms));
  }

  /** A line for the other daemons' event listeners (an idle or stop notice). */
  event(text: string): void {
    this.push1('event', text);
  }

  /** A frame opened in the thread: hash field `field` (f:<id>) is its record. */
  frame(threadKey: string, field: string, record: string): void {
    const p = this.publishing(threadKey, 0);
    p[2] = field;
    p[3] = record;
  }

  /** One more hop in the thread; its expiry pushed out when `refresh`. */
  hop(threadKey: string, refresh: boolean): void {
    this.publishing(threadKey, 1)[4] = refresh ? '1' : '0';
  }

  /** One more message of the thread in flight. */
  inFlight(threadKey: string): void {
    this.inFlightDeltas.set(threadKey, (this.inFlightDeltas.get(threadKey) ?? 0) + 1);
    this.queued();
  }

  /** Appends `entry` to a thread's history, numbers it in the thread and announces it. */
  history(threadKey: string, entry: string, refresh: boolean): void {
    const p = this.publishing(threadKey, 2);
    p[5] = entry;
    p[6] = refresh ? '1' : '0';
  }

  /** XADD of a message record; resolves (with 1) once Redis has the entry. */
  xadd(stream: string, record: string): Promise<number> {
    return this.withResult((w) => {
      this.waiters.push(w); // before the arguments: they may fill the batch and send it
      const p = this.open;
      if (p) {
        this.open = undefined;
        p[7] = this.key(stream);
        p[8] = record;
        for (const arg of p) this.args.push(arg);
        this.queued();
      } else {
        this.push2('xadd', this.key(stream), record);
      }
    }) as Promise<number>;
  }

  /**
   * In-flight count minus one; at zero an idle notice is announced. Resolves with what is left.
   * A message of the same thread published in this batch still to go (a handler's output, as its
   * input settles) nets out against it: neither goes to Redis, nothing is announced, and it
   * resolves with 1 (at least that one is in flight). A batch runs as one script, so no other
   * daemon can see the count between the two anyway.
   */
  settle(threadKey: string): Promise<number> {
    const delta = this.inFlightDeltas.get(threadKey);
    if (delta !== undefined && delta > 0) {
      if (delta === 1) this.inFlightDeltas.delete(threadKey);
      else this.inFlightDeltas.set(threadKey, delta - 1);
      return ONE;
    }
    return this.withResult((w) => {
      this.waiters.push(w);
      this.push1('settle', this.key(threadKey));
    }) as Promise<number>;
  }

  /** A thread's record (see the script), its expiry pushed out when `refresh`. */
  load(threadKey: string, refresh: boolean, frame: string): Promise<LoadReply> {
    return this.withResult((w) => {
      this.waiters.push(w);
      this.push3('load', this.key(threadKey), refresh ? '1' : '0', frame);
    }) as Promise<LoadReply>;
  }

  /**
   * XREADGROUP of up to `count` new entries, without BLOCK (a blocking command cannot run in a
   * script, and would stall the batch); with thread settings, each entry's thread state too. A
   * function is asked for the count when the batch goes out (at least 1).
   */
  read(stream: string, count: number | (() => number)): Promise<ReadEntry[]> {
    return this.withResult((waiter) => {
      this.reads.push({ stream, count, waiter });
      this.scheduled ??= setImmediate(this.flushLater);
    }) as Promise<ReadEntry[]>;
  }

  /** XACK, merged with the other acks of the batch for the same stream. */
  xack(stream: string, id: string): Promise<void> {
    return this.withResult((w) => {
      let acks = this.acks.get(stream);
      if (!acks) {
        acks = { ids: [], waiters: [] };
        this.acks.set(stream, acks);
      }
      acks.ids.push(id);
      acks.waiters.push(w);
      this.queued();
    }) as Promise<unknown> as Promise<void>;
  }

  /**
   * The heartbeat of the entries `ids` of a stream (see the script's beat): resolves with the ids
   * another consumer owns now, each followed by its owner. It rides in the next batch, so marking
   * costs no command of its own.
   */
  beat(stream: string, ids: readonly string[]): Promise<string[]> {
    return this.withResult((w) => {
      this.waiters.push(w);
      this.close();
      this.args.push('beat', this.key(stream), String(ids.length));
      for (const id of ids) this.args.push(id);
      this.queued();
    }) as Promise<string[]>;
  }

  /**
   * Sends what is queued now: when the turn ends, at close, and early when the batch has grown
   * (`early`: Redis starts on the writes while this daemon works on the rest of the turn; the
   * reads wait for the end of it).
   */
  flush(early = false): void {
    if (early && this.reads.length > 0) {
      this.scheduled ??= setImmediate(this.flushLater);
    } else if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    this.close();
    if (!this.pending) return;
    if (!early) {
      for (const { stream, count, waiter } of this.reads) {
        const n = typeof count === 'number' ? count : count();
        this.waiters.push(waiter);
        this.args.push('read', this.key(stream), String(Math.max(1, n)));
      }
      this.reads = [];
    }
    if (this.args.length === 0 && this.acks.size === 0 && this.inFlightDeltas.size === 0) return;
    if (this.inFlightDeltas.size > 0) {
      // Nothing in the batch depends on its position: first keeps a settle from reaching zero early.
      const head: string[] = [];
      for (const [threadKey, delta] of this.inFlightDeltas) {
        if (delta !== 0) head.push('inc', this.key(threadKey), String(delta));
      }
      this.inFlightDeltas = new Map();
      if (head.length > 0) this.args = head.concat(this.args);
    }
    for (const [stream, acks] of this.acks) {
      this.args.push('xack', this.key(stream), String(acks.ids.length));
      for (const id of acks.ids) this.args.push(id);
      // One waiter stands for the merged XACK; it settles every ack in it.
      this.waiters.push({
        resolve: (value) => {
          for (const w of acks.waiters) w.resolve(value);
        },
        reject: (error) => {
          for (const w of acks.waiters) w.reject(error);
        },
      });
    }
    const { keys, args, waiters } = this;
    this.keys = [];
    this.keyIndex = new Map();
    this.args = [];
    this.waiters = [];
    this.acks = new Map();
    this.last = this.client.organismBatch(keys.length, ...keys, ...this.header, ...args).then(
      ([results, errors]) => {
        for (let i = 0; i < waiters.length; i++) {
          const value = results[i];
          if (typeof value === 'string' && value.startsWith('!'))
            waiters[i]!.reject(new Error(value.slice(1)));
          else waiters[i]!.resolve((value ?? null) as Reply);
        }
        for (const error of errors) this.options.onError(new Error(error));
      },
      (error: Error) => {
        for (const w of waiters) w.reject(error);
        this.options.onError(error);
      },
    );
  }

  /** Sends what is queued and resolves when Redis has answered every batch sent so far. */
  drain(): Promise<void> {
    this.flush();
    return this.last.then(
      () => undefined,
      () => undefined,
    );
  }

  private makeHeader(threads: ThreadSettings | undefined): string[] {
    const o = this.options;
    return [
      o.channel,
      o.origin,
      o.group,
      o.consumer,
      threads?.threadPrefix ?? '',
      String(threads?.historyMax ?? 100),
      String(threads?.historyTtlMs ?? 1),
      String(threads?.threadTtlMs ?? 1),
      o.formatVersion,
      threads?.followingKey ?? '',
      threads?.historyPrefix ?? '',
    ];
  }

  private withResult(queue: (waiter: Waiter) => void): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => queue({ resolve, reject }));
  }

  /**
   * The open `pub` operation for a write of `stage` (0 frame, 1 hop, 2 history entry) in the
   * thread: the one already open when it is the same thread's and this part comes later in it, else
   * a new one (the open one goes as it is). Parts not written stay ''. Packing consecutive writes
   * into one operation changes nothing in their order.
   */
  private publishing(threadKey: string, stage: number): string[] {
    const open = this.open;
    const index = this.key(threadKey);
    if (open && open[1] === index && this.openStage < stage) {
      this.openStage = stage;
      return open;
    }
    this.close();
    this.open = ['pub', index, '', '', '', '', '', '', ''];
    this.openStage = stage;
    this.scheduled ??= setImmediate(this.flushLater);
    return this.open;
  }

  /** Queues the open `pub` operation as it is, without an XADD (whoever calls this queues next). */
  private close(): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    for (const arg of open) this.args.push(arg);
  }

  // push1..3: no rest-argument array per operation (this runs several times per hop).
  private push1(op: string, a: string): void {
    this.close();
    this.args.push(op, a);
    this.queued();
  }

  private push2(op: string, a: string, b: string): void {
    this.close();
    this.args.push(op, a, b);
    this.queued();
  }

  private push3(op: string, a: string, b: string, c: string): void {
    this.close();
    this.args.push(op, a, b, c);
    this.queued();
  }

  private queued(): void {
    if (this.args.length >= MAX_ARGS) this.flush(true);
    else this.scheduled ??= setImmediate(this.flushLater);
  }

  private readonly flushLater = (): void => {
    this.scheduled = undefined;
    this.flush();
  };

  /** The 1-based KEYS index of `key` (a string, as ARGV carries it). */
  private key(key: string): string {
    let index = this.keyIndex.get(key);
    if (index === undefined) {
      this.keys.push(key);
      index = String(this.keys.length);
      this.keyIndex.set(key, index);
    }
    return index;
  }
}
