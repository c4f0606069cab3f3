/**
 * The thread registry and history in Redis, so several daemons share every thread.
 *
 * Layout (all under the organism's `organism:{group}:` prefix):
 * - `thread:<id>` hash: created, scope (JSON), hops, stopped, inflight, and one `f:<frame>` field per
 *   open frame (`[listener, caller, parent, depth]`). Expires after twice thread_idle_ms without
 *   activity, as the in-memory registry forgets idle threads.
 * - `history:<id>` list of entries (JSON), trimmed to max_history_per_thread, kept 7 days.
 * - `events` channel: history entries, idle and stop notices, so watchers (`organism send --wait`,
 *   the live stream, agents reading history) on every daemon see work done on any daemon.
 *
 * Writes go on the transport's command connection and are sent in the order the bus makes them,
 * before the XADD of the message they belong to: Redis runs one connection's commands in order,
 * so whichever daemon reads the message finds its frame and thread already there. Writes are not
 * awaited (the bus does not wait on Redis per registry change); a failed one is logged.
 *
 * Hop budgets are counted in Redis (HINCRBY) and each daemon's copy is refreshed on every delivery,
 * so a thread spread over several daemons can overrun max_thread_hops by at most the hops taken
 * concurrently elsewhere since its last refresh: a loop is still stopped, a few hops late.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Capability } from '../../tools/types.ts';
import type { HistoryEntry, ThreadHistory } from '../history/index.ts';
import type { ThreadStore, ThreadStoreEvents } from '../thread-store.ts';
import type { Frame, ThreadRegistry, ThreadState } from '../threads.ts';
import { WriteBatch } from './batch.ts';
import { busClientOptions, openBusClient } from './connection.ts';
import type { BusKeys } from './options.ts';

/** KEYS: thread. ARGV: ttl ms, frame id or ''. Returns [created, scope, hops, stopped, inflight, frame, parent] or nil. */
const LOAD_SCRIPT = `
local v = redis.call('HMGET', KEYS[1], 'created', 'scope', 'hops', 'stopped', 'inflight', 'hist')
if not v[1] then return false end
local f = false
local p = false
if ARGV[2] ~= '' then
  f = redis.call('HGET', KEYS[1], 'f:' .. ARGV[2])
  if f then
    local parent = cjson.decode(f)[3]
    if parent ~= '' then p = redis.call('HGET', KEYS[1], 'f:' .. parent) end
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {v[1], v[2], v[3], v[4], v[5] or '0', f, p, v[6] or '0'}
`;

const HISTORY_TTL_MS = 7 * 24 * 3600 * 1000;

export interface RedisThreadStoreOptions {
  /** The transport's command connection: writes must share it with the XADDs they precede. */
  client: Redis;
  /** For the pub/sub connection (a subscribed connection can do nothing else). */
  url: string;
  keys: BusKeys;
  /** This daemon (its consumer name): its own events are not applied twice. */
  origin: string;
  /** limits.thread_idle_ms: a thread's shared state lives twice this long without activity. */
  idleMs: number;
  /** limits.max_history_per_thread. */
  maxHistoryPerThread: number;
  connectTimeoutMs?: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

interface Event {
  /** origin */
  o: string;
  /** thread */
  t: string;
  /** m: history entry, i: idle, s: stopped */
  k: 'm' | 'i' | 's';
  e?: HistoryEntry;
}

type ScriptClient = Redis & {
  organismThreadLoad(key: string, ttl: string, frame: string): Promise<(string | null)[] | null>;
};

export class RedisThreadStore implements ThreadStore {
  private readonly client: ScriptClient;
  private readonly batch: WriteBatch;
  private readonly keys: BusKeys;
  private readonly ttl: string;
  private registry: ThreadRegistry | undefined;
  private history: ThreadHistory | undefined;
  private events: ThreadStoreEvents | undefined;
  private subscriber: Redis | undefined;
  /** Set while applying another daemon's change, so the history listeners do not write it back. */
  private applying = false;
  /** Entry ids of histories just re-read from Redis, whose events may still arrive. */
  private readonly fresh = new Map<string, Set<string>>();
  private lastWriteError = '';
  private closed = false;

  constructor(private readonly options: RedisThreadStoreOptions) {
    this.client = options.client as ScriptClient;
    this.keys = options.keys;
    this.ttl = String(Math.max(options.idleMs * 2, 60_000));
    this.client.defineCommand('organismThreadLoad', { numberOfKeys: 1, lua: LOAD_SCRIPT });
    this.batch = new WriteBatch(options.client, (error) => this.writeFailed(error));
  }

  /** Sends the queued writes now; the transport calls it before each XADD (ordering). */
  flush(): void {
    this.batch.flush();
  }

  attach(registry: ThreadRegistry, history: ThreadHistory, events: ThreadStoreEvents): void {
    this.registry = registry;
    this.history = history;
    this.events = events;
    history.subscribe((thread, entry) => {
      if (!this.applying) this.writeHistory(thread, entry);
    });
    history.subscribeStopped((thread) => {
      if (this.applying) return;
      this.batch.hset(this.keys.thread(thread), 'stopped', '1');
      this.batch.publish(this.keys.events, JSON.stringify({ o: this.options.origin, t: thread, k: 's' }));
    });
    const { client } = openBusClient(
      this.options.url,
      busClientOptions(this.options.connectTimeoutMs ?? 2_000, `organism-${this.options.origin}-events`),
      (message) => this.options.logger?.warn(`redis thread events connection lost: ${message}`),
    );
    this.subscriber = client;
    client.on('message', (_channel: string, text: string) => this.apply(text));
    client.subscribe(this.keys.events).catch((error: unknown) => {
      this.options.logger?.error(`cannot subscribe to thread events: ${(error as Error).message}`);
    });
  }

  // ---- ThreadRegistryObserver: write-through ----------------------------------------------------

  threadCreated(state: ThreadState): void {
    const key = this.keys.thread(state.id);
    this.batch.hset(key, 'created', String(state.created));
    this.batch.hset(key, 'scope', state.scope ? JSON.stringify(state.scope) : '');
    this.batch.hset(key, 'hops', String(state.hops));
    this.batch.hset(key, 'stopped', state.stopped ? '1' : '0');
    this.batch.hset(key, 'inflight', '0');
    this.batch.pexpire(key, this.ttl);
  }

  frameOpened(frame: Frame): void {
    this.batch.hset(
      this.keys.thread(frame.thread),
      `f:${frame.id}`,
      JSON.stringify([frame.listener, frame.caller, frame.parent ?? '', frame.depth]),
    );
  }

  framesPruned(thread: string, ids: readonly string[]): void {
    const key = this.keys.thread(thread);
    for (const id of ids) this.batch.hdel(key, `f:${id}`);
  }

  hopCharged(state: ThreadState): void {
    const key = this.keys.thread(state.id);
    this.batch.hincr(key, 'hops', 1);
    this.batch.pexpire(key, this.ttl);
  }

  // ---- ThreadStore ------------------------------------------------------------------------------

  published(thread: string): void {
    this.batch.hincr(this.keys.thread(thread), 'inflight', 1);
  }

  settled(thread: string): Promise<number> {
    const idle = `{"o":${JSON.stringify(this.options.origin)},"t":${JSON.stringify(thread)},"k":"i"}`;
    return this.batch.settle(this.keys.thread(thread), this.keys.events, idle);
  }

  async load(thread: string, frame = ''): Promise<void> {
    const registry = this.registry!;
    this.batch.flush(); // this daemon's own writes first (same connection, so in order)
    const reply = await this.client.organismThreadLoad(this.keys.thread(thread), this.ttl, frame);
    if (!reply) {
      // Unknown to the registry (never made, or idle long enough to expire): a delivery is dropped,
      // but its history (kept longer) can still be read.
      if (!this.history!.has(thread)) await this.syncHistory(thread, 1);
      return;
    }
    const [created, scope, hops, stopped, inflight, frameJson, parentJson, hist] = reply;
    let state = registry.thread(thread);
    if (!state) {
      const now = Date.now();
      state = registry.adopt({
        id: thread,
        created: Number(created),
        lastActive: now,
        hops: Number(hops),
        inFlight: Number(inflight),
        stopped: stopped === '1',
        scope: scope ? (Object.freeze(JSON.parse(scope)) as readonly Capability[]) : undefined,
        frames: new Set(),
      });
    } else {
      state.hops = Math.max(state.hops, Number(hops));
      state.inFlight = Number(inflight);
    }
    if (stopped === '1' && !state.stopped) this.applyStopped(thread);
    if (frame) {
      this.syncFrame(thread, frame, frameJson ?? null);
      const parent = frameJson ? (JSON.parse(frameJson) as FrameRecord)[2] : '';
      if (parent) this.syncFrame(thread, parent, parentJson ?? null);
    }
    await this.syncHistory(thread, Number(hist ?? 0));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.subscriber?.disconnect();
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** Makes the local copy of one frame match Redis: adopt it, or drop it when it was pruned there. */
  private syncFrame(thread: string, id: string, json: string | null): void {
    const registry = this.registry!;
    const local = registry.frame(id);
    if (json === null) {
      // Pruned by another daemon (its caller got an answer): whatever arrives for it is dropped.
      if (local) registry.pruneFrame(local);
      return;
    }
    if (local) return;
    const [listener, caller, parent, depth] = JSON.parse(json) as FrameRecord;
    registry.adoptFrame({ id, thread, listener, caller, parent: parent || null, depth });
  }

  /** A thread first seen here mid-way (this daemon started after it began): its history so far. */
  /**
   * Makes this daemon's copy of a thread's history whole: when Redis has numbered more entries than
   * this daemon holds (it started after the thread began, or missed events while reconnecting),
   * the canonical list replaces the local copy.
   */
  private async syncHistory(thread: string, remote: number): Promise<void> {
    const local = this.history!.summary(thread);
    if (local && local.messages + local.dropped >= remote) return;
    const items = await this.client.lrange(this.keys.history(thread), 0, -1);
    if (items.length === 0) return;
    const entries = items.map((item) => JSON.parse(item) as HistoryEntry);
    this.history!.reset(thread, entries, Math.max(remote, entries.length));
    // Events for these entries may still be on their way: they must not be appended twice.
    this.fresh.set(thread, new Set(entries.map((e) => e.id)));
    setTimeout(() => this.fresh.delete(thread), 10_000).unref();
  }

  private writeHistory(thread: string, entry: HistoryEntry): void {
    const json = JSON.stringify(entry);
    this.batch.history(
      this.keys.history(thread),
      this.keys.thread(thread),
      this.keys.events,
      json,
      this.options.maxHistoryPerThread,
      HISTORY_TTL_MS,
      `{"o":${JSON.stringify(this.options.origin)},"t":${JSON.stringify(thread)},"k":"m","e":${json}}`,
    );
  }

  /** Another daemon's event: mirror its history entry, idle or stop notice here. */
  private apply(text: string): void {
    let event: Event;
    try {
      // History entries come as '<n>|<json>' (n: the entry's number in its thread).
      event = JSON.parse(text.startsWith('{') ? text : text.slice(text.indexOf('|') + 1)) as Event;
    } catch {
      return;
    }
    if (event.o === this.options.origin || typeof event.t !== 'string') return;
    if (event.k === 'm' && event.e) {
      if (this.fresh.get(event.t)?.has(event.e.id)) return;
      this.applying = true;
      try {
        this.history!.append(event.t, event.e);
      } finally {
        this.applying = false;
      }
    } else if (event.k === 'i') {
      const state = this.registry!.thread(event.t);
      if (state) state.inFlight = 0;
      this.events!.idle(event.t);
    } else if (event.k === 's') {
      this.applyStopped(event.t);
    }
  }

  private applyStopped(thread: string): void {
    const state = this.registry!.thread(thread);
    if (state) state.stopped = true;
    this.applying = true;
    try {
      this.history!.markStopped(thread);
    } finally {
      this.applying = false;
    }
    this.events!.stopped(thread);
  }

  private writeFailed(error: Error): void {
    if (error.message === this.lastWriteError) return;
    this.lastWriteError = error.message;
    this.options.logger?.error(`shared thread state write failed: ${error.message}`);
  }
}

type FrameRecord = [listener: string, caller: string, parent: string, depth: number];
