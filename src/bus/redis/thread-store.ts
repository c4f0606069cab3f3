/**
 * The thread registry and history in Redis, so several daemons share every thread.
 *
 * Layout (all under the organism's `organism:{group}:` prefix):
 * - `thread:<id>` hash: created, scope (JSON), hops, stopped, inflight, and one `f:<frame>` field per
 *   open frame (`[listener, caller, parent, depth]`) that something may answer into: a frame that
 *   links to no parent travels with the message that opens it instead (see frameOpened). Expires after
 *   twice thread_idle_ms without activity, as the in-memory registry forgets idle threads.
 * - `history:<id>` list of entries (JSON), trimmed to about max_history_per_thread, kept 7 days.
 * - `events` channel: idle and stop notices, and the history entries of threads some daemon follows
 *   live (`organism send --wait`, `GET /threads/:id/follow`; hash field `w` says until when), so
 *   those watchers see work done on any daemon. One message per batch: the sender's name on the
 *   first line (a daemon skips its own unparsed), then one event a line.
 *
 * A daemon's copy of a thread's history holds what was recorded here, and is made whole from the
 * list (LRANGE) when something needs all of it: the API reading the thread, an agent about to
 * handle a message of it (it reads the history), a watcher on this daemon. Announcing every entry
 * to every daemon instead would cost each daemon the work of all the others.
 *
 * Writes and loads are operations in the transport's command batch (batch.ts), queued in the
 * order the bus makes them: a message's thread state is written in the same script as, and before,
 * the XADD that publishes it, so whichever daemon reads the message finds its frame and thread
 * already there. Writes are not awaited (the bus does not wait on Redis per registry change); a
 * failed one is logged. A delivered message's thread state usually needs no load of its own: the
 * reader's script reads it together with the entry (preload), which is as fresh as a load. A
 * message that carries its frame needs none at all on a daemon that knows its thread (loadFor).
 *
 * Hop budgets are counted in Redis (HINCRBY) and each daemon's copy is refreshed on every delivery,
 * from Redis or from the count the message carries, so a thread spread over several daemons can
 * overrun max_thread_hops by at most the hops taken concurrently elsewhere since its last refresh:
 * a loop is still stopped, a few hops late.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Capability } from '../../tools/types.ts';
import type { HistoryEntry, ThreadHistory } from '../history/index.ts';
import type { Message } from '../message.ts';
import type { ThreadStore, ThreadStoreEvents } from '../thread-store.ts';
import { type Frame, frameCarriedBy, type ThreadRegistry, type ThreadState } from '../threads.ts';
import type { CommandBatch } from './batch.ts';
import { busClientOptions, openBusClient } from './connection.ts';
import { type BusKeys, DEFAULT_CONNECT_TIMEOUT_MS } from './options.ts';
import type { LoadReply } from './types.ts';

const ZERO = (): number => 0;
const HISTORY_TTL_MS = 7 * 24 * 3600 * 1000;
/** A delivery whose thread's history is at most this many entries behind waits for events first... */
const CATCH_UP_ENTRIES = 8;
/** ...this long (ms), then re-reads the list. */
const CATCH_UP_MS = 20;
/** A history list's expiry is pushed out at most this often by one daemon. */
const HISTORY_REFRESH_MS = 3600 * 1000;
/** A thread followed here is marked followed this far ahead (ms), and re-marked every third of it. */
const WATCH_MS = 60_000;

export interface RedisThreadStoreOptions {
  /** The transport's command connection (history re-reads). */
  client: Redis;
  /** The transport's command batch: writes go in the same script as, and before, the XADDs they precede. */
  batch: CommandBatch;
  /** For the pub/sub connection (a subscribed connection can do nothing else). */
  url: string;
  keys: BusKeys;
  /** This daemon (its consumer name): its own events are not applied twice. */
  origin: string;
  /** limits.thread_idle_ms: a thread's shared state lives twice this long without activity. */
  idleMs: number;
  /** limits.max_history_per_thread. */
  maxHistoryPerThread: number;
  /** Default: the transport's (DEFAULT_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

interface Event {
  /** thread */
  t: string;
  /** m: history entry, i: idle, s: stopped */
  k: 'm' | 'i' | 's';
  e?: HistoryEntry;
  /** idle: how many history entries the thread has */
  n?: number;
}

export class RedisThreadStore implements ThreadStore {
  private readonly client: Redis;
  private readonly batch: CommandBatch;
  private readonly keys: BusKeys;
  private readonly ttl: string;
  private readonly ttlMs: number;
  /**
   * When this daemon last pushed out a thread hash's and a history list's expiry: now and then is
   * enough (a new key always gets one), instead of a PEXPIRE on every hop and every load.
   */
  private readonly refreshed = new Map<string, number>();
  private readonly historyRefreshed = new Map<string, number>();
  private readonly named = new Map<string, string>();
  /** Deliveries waiting for history events to catch this daemon's copy up (see syncHistory). */
  private readonly catchingUp = new Map<string, Array<{ target: number; done(): void }>>();
  /**
   * Threads this daemon made, or read from Redis, while it was receiving events: every stop made
   * elsewhere since has reached it, so a message that carries its frame needs no load (loadFor).
   * Emptied when the events connection drops; bounded (emptying only costs loads).
   */
  private readonly current = new Set<string>();
  private listening = false;
  /** Frames this daemon pruned lately (two generations, so the memory stays bounded). */
  private pruned = new Set<string>();
  private prunedBefore = new Set<string>();
  private registry: ThreadRegistry | undefined;
  private history: ThreadHistory | undefined;
  private events: ThreadStoreEvents | undefined;
  private subscriber: Redis | undefined;
  /** State read with the message being delivered now (see preload). */
  private next: { thread: string; frame: string; reply: LoadReply } | undefined;
  /** Set while applying another daemon's change, so the history listeners do not write it back. */
  private applying = false;
  /** Entry ids of histories just re-read from Redis, whose events may still arrive. */
  private readonly fresh = new Map<string, Set<string>>();
  /** Threads somebody on this daemon follows live (see watch). */
  private readonly watched = new Set<string>();
  private watchTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: RedisThreadStoreOptions) {
    this.client = options.client;
    this.batch = options.batch;
    this.keys = options.keys;
    this.ttlMs = Math.max(options.idleMs * 2, 60_000);
    this.ttl = String(this.ttlMs);
    this.batch.useThreads({
      threadPrefix: this.keys.thread(''),
      followingKey: this.keys.following,
      threadTtlMs: this.ttlMs,
      historyMax: options.maxHistoryPerThread,
      historyTtlMs: HISTORY_TTL_MS,
      historyPrefix: this.keys.history(''),
    });
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
      this.batch.hset(this.threadKey(thread), 'stopped', '1');
      this.batch.event(JSON.stringify({ t: thread, k: 's' }));
    });
    const { client } = openBusClient(
      this.options.url,
      busClientOptions(
        this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        `organism-${this.options.origin}-events`,
      ),
      (message) => this.options.logger?.warn(`redis thread events connection lost: ${message}`),
    );
    this.subscriber = client;
    client.on('message', (_channel: string, text: string) => this.applyAll(text));
    // Events sent while the connection was down are lost: from then on, every thread is read from
    // Redis again before a delivery may do without (see current).
    client.on('close', () => {
      this.listening = false;
      this.current.clear();
    });
    const listen = (): void => {
      client.subscribe(this.keys.events).then(
        () => {
          // A record read before the connection dropped may have been applied since.
          if (!this.listening) this.current.clear();
          this.listening = true;
        },
        (error: unknown) => {
          this.options.logger?.error(`cannot subscribe to thread events: ${(error as Error).message}`);
        },
      );
    };
    client.on('ready', listen); // after a reconnect too (subscribing again is harmless)
  }

  // ---- ThreadRegistryObserver: write-through ----------------------------------------------------

  threadCreated(state: ThreadState): void {
    const key = this.threadKey(state.id);
    this.batch.hset(key, 'created', String(state.created));
    this.batch.hset(key, 'scope', state.scope ? JSON.stringify(state.scope) : '');
    this.batch.hset(key, 'hops', String(state.hops));
    this.batch.hset(key, 'stopped', state.stopped ? '1' : '0');
    // No `inflight` field: the batch sends in-flight increments ahead of everything else, so a
    // 0 written here would wipe out the first message's (HINCRBY starts a missing field at 0).
    this.batch.pexpire(key, this.ttl);
    this.refreshed.set(state.id, Date.now());
    this.noteCurrent(state.id);
  }

  /**
   * A frame that links to no parent is not written: it travels with the message that opens it
   * (Message.frameDepth), which spares every plain send a write and a delete. It is written once
   * something else refers to it (see keep).
   */
  frameOpened(frame: Frame): void {
    if (frame.parent === null) return;
    this.keep(this.registry?.frame(frame.parent));
    this.writeFrame(frame);
  }

  framesPruned(thread: string, frames: readonly Frame[]): void {
    const key = this.threadKey(thread);
    for (const frame of frames) {
      // No record to delete, and no state read can bring it back.
      if (!frame.stored) continue;
      this.batch.hdel(key, `f:${frame.id}`);
      this.notePruned(frame.id);
    }
  }

  hopCharged(state: ThreadState): void {
    this.batch.hop(this.threadKey(state.id), this.refresh(state.id));
  }

  // ---- ThreadStore ------------------------------------------------------------------------------

  published(thread: string, into?: Frame): void {
    if (into) this.keep(into);
    this.batch.inFlight(this.threadKey(thread));
  }

  /**
   * A thread followed here whose last message this daemon settles: its watchers hear "idle" next,
   * so entries other daemons recorded since this daemon last made its copy whole are read first
   * (their events may still be on the way, or lost). An idle notice from another daemon does the
   * same (see apply).
   */
  settled(thread: string): Promise<number> {
    const left = this.batch.settle(this.threadKey(thread));
    if (!this.watched.has(thread)) return left;
    return left.then((n) => (n > 0 ? n : this.rereadHistory(thread, 0).then(ZERO, ZERO)));
  }

  /**
   * The thread state the transport read together with the message it is about to deliver (in the
   * same script as the read, after this daemon's earlier writes, so as fresh as a load). The next
   * load() of that thread and frame takes it instead of asking Redis; an empty thread clears it.
   */
  preload(thread: string, frame: string, reply: LoadReply): void {
    this.next = thread ? { thread, frame, reply } : undefined;
  }

  load(thread: string, frame = '', wholeHistory = false): Promise<void> | undefined {
    return this.loadNow(thread, frame, wholeHistory, undefined);
  }

  /**
   * A message that carries its frame comes with no state from the read (see the read script):
   * when this daemon knows the thread and needs no more of it, its own copy serves. The hop count
   * the message carries is as fresh as Redis's for a chain of sends (with branches running on
   * several daemons it may lag by what those took meanwhile, as the budget note above allows),
   * and a stop made elsewhere arrives as an event, so at most a message read just before that
   * event is handled, as one already running would be. Only a thread read or made while events
   * were coming in (current) is trusted so.
   */
  loadFor(message: Message, wholeHistory: boolean): Promise<void> | undefined {
    const carried = frameCarriedBy(message);
    const { thread, frame } = message;
    const next = this.next;
    const preloaded = next !== undefined && next.thread === thread && next.frame === frame;
    if (carried && !preloaded && !wholeHistory && !this.watched.has(thread) && this.current.has(thread)) {
      const state = this.registry!.thread(thread);
      if (state) {
        state.hops = Math.max(state.hops, message.hop);
        if (!this.registry!.frame(frame)) this.registry!.adoptFrame(carried);
        return undefined;
      }
    }
    return this.loadNow(thread, frame, wholeHistory, carried);
  }

  private loadNow(
    thread: string,
    frame: string,
    wholeHistory: boolean,
    carried: Frame | undefined,
  ): Promise<void> | undefined {
    const next = this.next;
    if (next && next.thread === thread && next.frame === frame) {
      // The common case: no round trip, and nothing to wait for unless history must be read.
      this.next = undefined;
      return this.applyRecord(thread, frame, next.reply, wholeHistory, carried);
    }
    // Queued after this daemon's own writes, in the same batch: it sees them.
    return this.batch
      .load(this.threadKey(thread), this.refresh(thread), frame)
      .then((reply) => this.applyRecord(thread, frame, reply, wholeHistory, carried));
  }

  /** Whether events from the other daemons reach this one now (subscribed). */
  get receivingEvents(): boolean {
    return this.listening;
  }

  watch(thread: string, on: boolean): void {
    if (!on) {
      this.watched.delete(thread);
      if (this.watched.size === 0 && this.watchTimer) {
        clearInterval(this.watchTimer);
        this.watchTimer = undefined;
      }
      return; // the mark runs out by itself (another daemon may still follow the thread)
    }
    if (this.watched.has(thread)) return;
    this.watched.add(thread);
    this.markWatched(thread);
    // Entries other daemons record before the mark is in Redis are not announced: once it is,
    // read what this daemon's copy lacks, rather than leave them for when the thread goes idle.
    this.batch
      .drain()
      .then(() => (this.watched.has(thread) ? this.rereadHistory(thread, 0) : undefined))
      .catch((error: unknown) => {
        this.options.logger?.warn(`cannot catch up thread ${thread}: ${(error as Error).message}`);
      });
    this.watchTimer ??= setInterval(() => {
      for (const t of this.watched) this.markWatched(t);
    }, WATCH_MS / 3);
    this.watchTimer.unref();
  }

  private markWatched(thread: string): void {
    this.batch.follow(this.threadKey(thread), Date.now() + WATCH_MS, WATCH_MS);
  }

  /**
   * Brings the registry in step with a thread's record from Redis. Returns a promise only when the
   * local history has to be re-read first.
   */
  private applyRecord(
    thread: string,
    frame: string,
    reply: LoadReply,
    wholeHistory: boolean,
    carried: Frame | undefined,
  ): Promise<void> | undefined {
    const registry = this.registry!;
    if (!reply) {
      // Unknown to the registry (never made, or idle long enough to expire): a delivery is dropped,
      // but its history (kept longer) can still be read.
      return this.history!.has(thread) ? undefined : this.syncHistory(thread, 1, wholeHistory);
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
    this.noteCurrent(thread);
    if (frame) {
      this.syncFrame(thread, frame, frameJson ?? null, carried);
      // The frame as this daemon now has it names its parent (none: it was pruned here, or in Redis).
      const parent = registry.frame(frame)?.parent;
      if (parent) this.syncFrame(thread, parent, parentJson ?? null);
    }
    return this.syncHistory(thread, Number(hist ?? 0), wholeHistory);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.watchTimer) clearInterval(this.watchTimer);
    this.subscriber?.disconnect();
  }

  // ---- internals ----------------------------------------------------------------------------------

  /**
   * Makes the local copy of one frame match Redis: adopt it, or drop it when it was pruned there.
   * A frame the message carries is not in Redis unless something referred to it since: then it
   * is taken from the message.
   */
  private syncFrame(thread: string, id: string, json: string | null, carried?: Frame): void {
    const registry = this.registry!;
    const local = registry.frame(id);
    if (json === null && carried) {
      if (!local) registry.adoptFrame(carried);
      return;
    }
    if (json === null) {
      // Pruned by another daemon (its caller got an answer): whatever arrives for it is dropped.
      if (local) registry.pruneFrame(local);
      return;
    }
    // A state read before this daemon's own prune reached Redis must not bring the frame back.
    if (local || this.pruned.has(id) || this.prunedBefore.has(id)) return;
    const [listener, caller, parent, depth] = JSON.parse(json) as FrameRecord;
    registry.adoptFrame({ id, thread, listener, caller, parent: parent || null, depth, stored: true });
  }

  /**
   * Makes this daemon's copy of a thread's history whole when something needs all of it (`whole`,
   * or a watcher here): when Redis has numbered more entries than this daemon holds (other daemons
   * recorded them, or it missed events while reconnecting), it reads the list.
   */
  private syncHistory(thread: string, remote: number, whole: boolean): Promise<void> | undefined {
    const watched = this.watched.has(thread);
    if (!whole && !watched) return undefined;
    const have = this.historyCount(thread);
    if (have >= remote) return undefined;
    // Followed here and just behind: usually the other daemon's events for these entries are on
    // their way (pub/sub and this read come on different connections); wait for them briefly.
    if (watched && have >= 0 && remote - have <= CATCH_UP_ENTRIES) {
      return this.eventsFor(thread, remote).then(() =>
        this.historyCount(thread) >= remote ? undefined : this.rereadHistory(thread, remote),
      );
    }
    return this.rereadHistory(thread, remote);
  }

  /** Entries this daemon's copy of a thread's history has numbered (-1: none kept). */
  private historyCount(thread: string): number {
    const local = this.history!.summary(thread);
    return local ? local.messages + local.dropped : -1;
  }

  /** Resolves when events brought the thread's history to `target` entries, or after CATCH_UP_MS. */
  private eventsFor(thread: string, target: number): Promise<void> {
    return new Promise((resolve) => {
      let list = this.catchingUp.get(thread);
      if (!list) {
        list = [];
        this.catchingUp.set(thread, list);
      }
      const waiter = {
        target,
        done: () => {
          clearTimeout(timer);
          const left = this.catchingUp.get(thread)?.filter((w) => w !== waiter) ?? [];
          if (left.length > 0) this.catchingUp.set(thread, left);
          else this.catchingUp.delete(thread);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, CATCH_UP_MS);
      list.push(waiter);
    });
  }

  private async rereadHistory(thread: string, remote: number): Promise<void> {
    const items = await this.client.lrange(this.keys.history(thread), -this.options.maxHistoryPerThread, -1);
    if (items.length === 0) return;
    const entries = items.map((item) => JSON.parse(item) as HistoryEntry);
    const local = this.watched.has(thread) ? this.history!.messages(thread) : undefined;
    if (local) {
      // Watchers here follow the entries as they are appended: give them the ones they missed.
      const have = new Set(local.messages.map((m) => m.id));
      this.applying = true;
      try {
        for (const entry of entries) if (!have.has(entry.id)) this.history!.append(thread, entry);
      } finally {
        this.applying = false;
      }
    } else {
      this.history!.reset(thread, entries, Math.max(remote, entries.length));
    }
    // Events for these entries may still be on their way: they must not be appended twice.
    this.fresh.set(thread, new Set(entries.map((e) => e.id)));
    setTimeout(() => this.fresh.delete(thread), 10_000).unref();
  }

  private writeFrame(frame: Frame): void {
    frame.stored = true;
    this.batch.frame(
      this.threadKey(frame.thread),
      `f:${frame.id}`,
      JSON.stringify([frame.listener, frame.caller, frame.parent ?? '', frame.depth]),
    );
  }

  /**
   * A frame something other than its message refers to now (a frame opened below it, a reply or
   * report sent into it): written, if it was not, before whatever refers to it.
   */
  private keep(frame: Frame | undefined): void {
    if (frame && !frame.stored) this.writeFrame(frame);
  }

  private writeHistory(thread: string, entry: HistoryEntry): void {
    this.batch.history(
      this.threadKey(thread),
      JSON.stringify(entry),
      due(this.historyRefreshed, thread, HISTORY_REFRESH_MS),
    );
  }

  /**
   * A thread's key, made once per thread: the same string object each time, so the batch's key
   * table finds it by a hash computed once (a hop names its thread several times).
   */
  private threadKey(thread: string): string {
    let key = this.named.get(thread);
    if (key === undefined) {
      if (this.named.size >= 50_000) this.named.clear();
      key = this.keys.thread(thread);
      this.named.set(thread, key);
    }
    return key;
  }

  private noteCurrent(thread: string): void {
    if (!this.listening) return;
    if (this.current.size >= 100_000) this.current.clear();
    this.current.add(thread);
  }

  private notePruned(id: string): void {
    if (this.pruned.size >= 5_000) {
      this.prunedBefore = this.pruned;
      this.pruned = new Set();
    }
    this.pruned.add(id);
  }

  /** Whether this daemon should push out the thread hash's expiry now (at most once per quarter of its time to live). */
  private refresh(thread: string): boolean {
    return due(this.refreshed, thread, this.ttlMs / 4);
  }

  /**
   * A batch of events from some daemon: its name on the first line, then one event a line. This
   * daemon's own are skipped unparsed.
   */
  private applyAll(text: string): void {
    const first = text.indexOf('\n');
    if (first < 0 || text.slice(0, first) === this.options.origin) return;
    let start = first + 1;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      this.apply(text.slice(start, end));
      start = end + 1;
    }
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
    if (typeof event.t !== 'string') return;
    if (event.k === 'm' && event.e) {
      // Announced because some daemon follows the thread; this one need not keep up unless it does.
      if (!this.watched.has(event.t) || this.fresh.get(event.t)?.has(event.e.id)) return;
      this.applying = true;
      try {
        this.history!.append(event.t, event.e);
      } finally {
        this.applying = false;
      }
      const waiting = this.catchingUp.get(event.t);
      if (waiting) {
        const have = this.historyCount(event.t);
        for (const w of [...waiting]) if (have >= w.target) w.done();
      }
    } else if (event.k === 'i') {
      const thread = event.t;
      const idle = (): void => {
        const state = this.registry!.thread(thread);
        if (state) state.inFlight = 0;
        this.events!.idle(thread);
      };
      // Watchers here read the whole thread when it goes idle: entries recorded elsewhere before
      // they started following it are read first.
      const synced = typeof event.n === 'number' ? this.syncHistory(thread, event.n, false) : undefined;
      if (synced) synced.then(idle, idle);
      else idle();
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
}

/** True (and noted) when `key` was last marked in `seen` at least `everyMs` ago or never; bounded. */
function due(seen: Map<string, number>, key: string, everyMs: number): boolean {
  const now = Date.now();
  const last = seen.get(key);
  if (last !== undefined && now - last < everyMs) return false;
  if (seen.size >= 100_000) seen.clear();
  seen.set(key, now);
  return true;
}

type FrameRecord = [listener: string, caller: string, parent: string, depth: number];
