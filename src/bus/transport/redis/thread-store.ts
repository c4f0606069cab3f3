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
 *   live (thread-events.ts: the channel's side of a daemon; what an event does is here, see apply).
 * - `changes` list, one per partition: every frame record deleted and every thread stopped, in the
 *   order they happened (lua/batch.lua: change), for the readers (see trusting).
 *
 * A daemon's copy of a thread's history holds what was recorded here, and is made whole from the
 * list when something needs all of it (thread-history.ts).
 *
 * Writes and loads are operations in the transport's command batch (batch.ts), queued in the
 * order the bus makes them: a message's thread state is written in the same script as, and before,
 * the XADD that publishes it, so whichever daemon reads the message finds its frame and thread
 * already there. Writes are not awaited (the bus does not wait on Redis per registry change); a
 * failed one is logged. A delivered message's thread state usually needs no load of its own: the
 * reader's script reads it together with the entry (preload), which is as fresh as a load. A
 * message that carries its frame needs none at all on a daemon that knows its thread (loadFor), and
 * neither does one into a frame this daemon holds, read plainly with the partition's changes read
 * right behind it: what another daemon could have done to that frame or thread since this daemon
 * read it is a prune or a stop, and those are in the changes (trusting).
 *
 * Hop budgets are counted in Redis (HINCRBY) and each daemon's copy is refreshed on every delivery,
 * from Redis or from the count the message carries, so a thread spread over several daemons can
 * overrun max_thread_hops by at most the hops taken concurrently elsewhere since its last refresh:
 * a loop is still stopped, a few hops late.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Capability } from '../../../tools/types.ts';
import type { ThreadHistory } from '../../history/index.ts';
import type { Message } from '../../message.ts';
import type { SharedThreadStore, ThreadStoreEvents } from '../../thread-store.ts';
import { type Frame, frameCarriedBy, type ThreadRegistry, type ThreadState } from '../../threads.ts';
import { type BusBatch, CHANGES_PER_READ, type ChangesFrom, type ChangesReply } from './batch.ts';
import type { BusKeys } from './options.ts';
import { type ThreadEvent, ThreadEvents } from './thread-events.ts';
import { due, HISTORY_TTL_MS, HistoryMirror } from './thread-history.ts';
import type { LoadReply } from './types.ts';

const ZERO = (): number => 0;
/** 'p': a change line of a frame pruned (see #applyChanges). */
const P = 112;

export interface RedisThreadStoreOptions {
  /** The transport's command connection (history re-reads). */
  client: Redis;
  /** The transport's command batch: writes go in the same script as, and before, the XADDs they precede. */
  batch: BusBatch;
  /** For the pub/sub connection (a subscribed connection can do nothing else). */
  url: string;
  keys: BusKeys;
  /** This daemon (its consumer name): its own events are not applied twice. */
  origin: string;
  /** limits.thread_idle_ms: a thread's shared state lives twice this long without activity. */
  idleMs: number;
  /** limits.max_history_per_thread. */
  maxHistoryPerThread: number;
  /** Default: the transport's default (DEFAULT_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

export class RedisThreadStore implements SharedThreadStore {
  readonly shared = true;
  readonly #client: Redis;
  readonly #batch: BusBatch;
  readonly #keys: BusKeys;
  readonly #ttl: string;
  readonly #ttlMs: number;
  /**
   * When this daemon last pushed out a thread hash's and a history list's expiry: now and then is
   * enough (a new key always gets one), instead of a PEXPIRE on every hop and every load.
   */
  readonly #refreshed = new Map<string, number>();
  readonly #named = new Map<string, string>();
  /**
   * Threads this daemon made, or read from Redis, while it was receiving events: every stop made
   * elsewhere since has reached it, so a message that carries its frame needs no load (loadFor).
   * Emptied when the events connection drops; bounded (emptying only costs loads).
   */
  readonly #current = new Set<string>();
  /** Frames this daemon pruned lately (two generations, so the memory stays bounded). */
  #pruned = new Set<string>();
  #prunedBefore = new Set<string>();
  /** Frames whose record this daemon deleted (the same frame is pruned twice, see framesPruned). */
  readonly #deleted = new WeakSet<Frame>();
  #registry: ThreadRegistry | undefined;
  #history: ThreadHistory | undefined;
  #events: ThreadStoreEvents | undefined;
  /** State read with the message being delivered now (see preload). */
  #next: { thread: string; frame: string; reply: LoadReply } | undefined;
  /**
   * Per partition: the position in its changes list up to which they are applied here. From 0: a
   * copy of a thread read before this daemon's first changes must not miss one made after it.
   */
  readonly #cursors: number[];
  /** Every change made before the entries being dispatched now were read is applied here (trusting). */
  #changesApplied = false;
  /** Deliveries since trusting() was last asked that could not go on this daemon's copy. */
  #untrusted = 0;
  /** The events channel, and which threads somebody on this daemon follows live (see watch). */
  readonly #channel: ThreadEvents;
  readonly #watched: ReadonlySet<string>;
  /** This daemon's copy of the thread histories, kept in step with Redis. */
  readonly #histories: HistoryMirror;
  #closed = false;

  constructor(private readonly options: RedisThreadStoreOptions) {
    this.#client = options.client;
    this.#batch = options.batch;
    this.#keys = options.keys;
    this.#ttlMs = Math.max(options.idleMs * 2, 60_000);
    this.#ttl = String(this.#ttlMs);
    this.#cursors = new Array<number>(this.#keys.partitions).fill(0);
    // Each partition's script reads and writes the threads of its own partition (partitions.ts).
    this.#batch.useThreadsBy((partition) => ({
      threadPrefix: this.#keys.threadPrefix(partition),
      followingKey: this.#keys.followingOf(partition),
      threadTtlMs: this.#ttlMs,
      historyMax: options.maxHistoryPerThread,
      historyTtlMs: HISTORY_TTL_MS,
      historyPrefix: this.#keys.historyPrefix(partition),
      changesFrom: () => this.changesFrom(partition),
    }));
    this.#channel = new ThreadEvents({
      batch: this.#batch,
      url: options.url,
      channel: this.#keys.events,
      origin: options.origin,
      threadKey: (thread) => this.#threadKey(thread),
      connectTimeoutMs: options.connectTimeoutMs,
      logger: options.logger,
    });
    this.#watched = this.#channel.watched;
    this.#histories = new HistoryMirror({
      client: this.#client,
      batch: this.#batch,
      keys: this.#keys,
      maxHistoryPerThread: options.maxHistoryPerThread,
      channel: this.#channel,
      threadKey: (thread) => this.#threadKey(thread),
    });
  }

  attach(registry: ThreadRegistry, history: ThreadHistory, events: ThreadStoreEvents): void {
    this.#registry = registry;
    this.#history = history;
    this.#events = events;
    this.#histories.attach(history);
    history.subscribe((thread, entry) => {
      if (!this.#histories.applying) this.#histories.write(thread, entry);
    });
    history.subscribeStopped((thread) => {
      if (this.#histories.applying) return;
      this.#batch.stop(this.#threadKey(thread));
    });
    // Events missed (the connection dropped): from then on, every thread is read from Redis again
    // before a delivery may do without (see current).
    this.#channel.open(
      (event) => this.#apply(event),
      () => this.#current.clear(),
    );
  }

  // ---- ThreadRegistryObserver: write-through ----------------------------------------------------

  threadCreated(state: ThreadState): void {
    const key = this.#threadKey(state.id);
    this.#batch.hset(key, 'created', String(state.created));
    this.#batch.hset(key, 'scope', state.scope ? JSON.stringify(state.scope) : '');
    this.#batch.hset(key, 'hops', String(state.hops));
    this.#batch.hset(key, 'stopped', state.stopped ? '1' : '0');
    // No `inflight` field: the batch sends in-flight increments ahead of everything else, so a
    // 0 written here would wipe out the first message's (HINCRBY starts a missing field at 0).
    this.#batch.pexpire(key, this.#ttl);
    this.#refreshed.set(state.id, Date.now());
    this.#noteCurrent(state.id);
  }

  /**
   * A frame that links to no parent is not written: it travels with the message that opens it
   * (Message.frameDepth), which spares every plain send a write and a delete. It is written once
   * something else refers to it (see keep).
   */
  frameOpened(frame: Frame): void {
    if (frame.parent === null) return;
    this.#keep(this.#registry?.frame(frame.parent));
    this.#writeFrame(frame);
  }

  framesPruned(thread: string, frames: readonly Frame[]): void {
    const key = this.#threadKey(thread);
    for (const frame of frames) {
      // No record to delete, and no state read can bring it back; or deleted already: a
      // responder's frame is pruned once it answered and again once its handler finished.
      if (!frame.stored || this.#deleted.has(frame)) continue;
      this.#deleted.add(frame);
      this.#batch.prune(key, frame.id);
      this.#notePruned(frame.id);
    }
  }

  hopCharged(state: ThreadState): void {
    this.#batch.hop(this.#threadKey(state.id), this.#refresh(state.id));
  }

  // ---- ThreadStore ------------------------------------------------------------------------------

  published(thread: string, into?: Frame): void {
    if (into) this.#keep(into);
    this.#batch.inFlight(this.#threadKey(thread));
  }

  /**
   * A thread followed here whose last message this daemon settles: its watchers hear "idle" next,
   * so entries other daemons recorded since this daemon last made its copy whole are read first
   * (their events may still be on the way, or lost). An idle notice from another daemon does the
   * same (see apply).
   */
  settled(thread: string): Promise<number> {
    const left = this.#batch.settle(this.#threadKey(thread));
    if (!this.#watched.has(thread)) return left;
    return left.then((n) => (n > 0 ? n : this.#histories.reread(thread, 0).then(ZERO, ZERO)));
  }

  /**
   * The thread state the transport read together with the message it is about to deliver (in the
   * same script as the read, after this daemon's earlier writes, so as fresh as a load). The next
   * load() of that thread and frame takes it instead of asking Redis; an empty thread clears it.
   */
  preload(thread: string, frame: string, reply: LoadReply): void {
    this.#next = thread ? { thread, frame, reply } : undefined;
  }

  load(thread: string, frame = '', wholeHistory = false): Promise<void> | undefined {
    return this.#loadNow(thread, frame, wholeHistory, undefined);
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
    const next = this.#next;
    const preloaded = next !== undefined && next.thread === thread && next.frame === frame;
    // The copy here may serve: the whole history is not needed, and the thread was read or made
    // while events came in (see current).
    const mayTrust = !wholeHistory && !this.#watched.has(thread) && this.#current.has(thread);
    if (carried && !preloaded && mayTrust) {
      const state = this.#registry!.thread(thread);
      if (state) {
        state.hops = Math.max(state.hops, message.hop);
        if (!this.#registry!.frame(frame)) this.#registry!.adoptFrame(carried);
        return undefined;
      }
    }
    if (!carried && !preloaded && mayTrust && this.#changesApplied && this.#onCopy(message)) return undefined;
    // Whether the next read may be plain (see trusting): would this delivery have gone on the copy?
    if (!carried && !(mayTrust && this.#holds(message))) this.#untrusted++;
    return this.#loadNow(thread, frame, wholeHistory, carried);
  }

  /**
   * Around the dispatch of a read's entries (ReaderHost.trusting): `changes`, those of their
   * partition read right behind them, are applied first; with them all applied, the deliveries of
   * messages that carry no frame may go on this daemon's copy (see #onCopy). Returns how many
   * deliveries since the last call could not.
   */
  trusting(partition: number, changes: ChangesReply | undefined): number {
    const untrusted = this.#untrusted;
    this.#untrusted = 0;
    this.#changesApplied = changes !== undefined && this.#applyChanges(partition, changes);
    return untrusted;
  }

  /** The partition's changes list, and the position from which this daemon has not applied them. */
  changesFrom(partition: number): ChangesFrom {
    return [this.#keys.changes(partition), this.#cursors[partition]!];
  }

  /**
   * Applies a partition's changes read from a position on (lua/changes.lua); true when they reach
   * the list's end, so that no change made before the entries read beside them is missing here.
   * Changes trimmed away before this daemon read them (it fell 2,000 behind) may concern any
   * thread: none of its copies serves until read again. Reads go on two connections, so changes
   * may come twice: those before the cursor are applied already.
   */
  #applyChanges(partition: number, [start, gap, count, lines]: ChangesReply): boolean {
    if (gap) this.#current.clear();
    const cursor = this.#cursors[partition]!;
    let at = start;
    for (let i = 0; count > 0 && i <= lines.length; at++) {
      let end = lines.indexOf('\n', i);
      if (end < 0) end = lines.length;
      if (at >= cursor) {
        // 'p|<frame>|<thread>': a frame's record deleted; 's||<thread>': the thread stopped.
        const bar = lines.indexOf('|', i + 2);
        if (lines.charCodeAt(i) === P) this.#applyPruned(lines.slice(i + 2, bar));
        else this.#applyStopped(lines.slice(bar + 1, end));
      }
      i = end + 1;
    }
    this.#cursors[partition] = Math.max(cursor, start + count);
    return count < CHANGES_PER_READ;
  }

  /**
   * A message that carries no frame, read with every change of its partition made before it applied
   * here (trusting): no frame this daemon holds was pruned, nor its thread stopped, before the entry
   * was taken, so when the thread, its frame and the frame's parent are here, the delivery goes on
   * them as a load would have left them. The hop count is the message's, as for a carried frame.
   */
  #onCopy(message: Message): boolean {
    if (!this.#holds(message)) return false;
    const state = this.#registry!.thread(message.thread)!;
    state.hops = Math.max(state.hops, message.hop);
    return true;
  }

  #holds(message: Message): boolean {
    const registry = this.#registry!;
    if (!registry.thread(message.thread)) return false;
    const frame = registry.frame(message.frame);
    return frame !== undefined && (frame.parent === null || registry.frame(frame.parent) !== undefined);
  }

  #loadNow(
    thread: string,
    frame: string,
    wholeHistory: boolean,
    carried: Frame | undefined,
  ): Promise<void> | undefined {
    const next = this.#next;
    if (next && next.thread === thread && next.frame === frame) {
      // The common case: no round trip, and nothing to wait for unless history must be read.
      this.#next = undefined;
      return this.#applyRecord(thread, frame, next.reply, wholeHistory, carried);
    }
    // Queued after this daemon's own writes, in the same batch: it sees them.
    return this.#batch
      .load(this.#threadKey(thread), this.#refresh(thread), frame)
      .then((reply) => this.#applyRecord(thread, frame, reply, wholeHistory, carried));
  }

  /** The events connection (tests drop its subscription to lose events). */
  get subscriber(): Redis | undefined {
    return this.#channel.subscriber;
  }

  /** Whether events from the other daemons reach this one now (subscribed). */
  get receivingEvents(): boolean {
    return this.#channel.receiving;
  }

  watch(thread: string, on: boolean): void {
    if (!this.#channel.follow(thread, on)) return;
    // Entries other daemons record before the mark is in Redis are not announced: once it is,
    // read what this daemon's copy lacks, rather than leave them for when the thread goes idle.
    this.#batch
      .drain()
      .then(() => (this.#watched.has(thread) ? this.#histories.reread(thread, 0) : undefined))
      .catch((error: unknown) => {
        this.options.logger?.warn(`cannot catch up thread ${thread}: ${(error as Error).message}`);
      });
  }

  /**
   * Brings the registry in step with a thread's record from Redis. Returns a promise only when the
   * local history has to be re-read first.
   */
  #applyRecord(
    thread: string,
    frame: string,
    reply: LoadReply,
    wholeHistory: boolean,
    carried: Frame | undefined,
  ): Promise<void> | undefined {
    const registry = this.#registry!;
    if (!reply) {
      // Unknown to the registry (never made, or idle long enough to expire): a delivery is dropped,
      // but its history (kept longer) can still be read.
      return this.#history!.has(thread) ? undefined : this.#histories.sync(thread, 1, wholeHistory);
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
    if (stopped === '1' && !state.stopped) this.#applyStopped(thread);
    this.#noteCurrent(thread);
    if (frame) {
      this.#syncFrame(thread, frame, frameJson ?? null, carried);
      // The frame as this daemon now has it names its parent (none: it was pruned here, or in Redis).
      const parent = registry.frame(frame)?.parent;
      if (parent) this.#syncFrame(thread, parent, parentJson ?? null);
    }
    return this.#histories.sync(thread, hist == null ? undefined : Number(hist), wholeHistory);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#channel.close();
  }

  // ---- internals ----------------------------------------------------------------------------------

  /**
   * Makes the local copy of one frame match Redis: adopt it, or drop it when it was pruned there.
   * A frame the message carries is not in Redis unless something referred to it since: then it
   * is taken from the message.
   */
  #syncFrame(thread: string, id: string, json: string | null, carried?: Frame): void {
    const registry = this.#registry!;
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
    if (local || this.#pruned.has(id) || this.#prunedBefore.has(id)) return;
    const [listener, caller, parent, depth] = JSON.parse(json) as FrameRecord;
    registry.adoptFrame({ id, thread, listener, caller, parent: parent || null, depth, stored: true });
  }

  #writeFrame(frame: Frame): void {
    frame.stored = true;
    this.#batch.frame(
      this.#threadKey(frame.thread),
      `f:${frame.id}`,
      JSON.stringify([frame.listener, frame.caller, frame.parent ?? '', frame.depth]),
    );
  }

  /**
   * A frame something other than its message refers to now (a frame opened below it, a reply or
   * report sent into it): written, if it was not, before whatever refers to it.
   */
  #keep(frame: Frame | undefined): void {
    if (frame && !frame.stored) this.#writeFrame(frame);
  }

  /**
   * A thread's key, made once per thread: the same string object each time, so the batch's key
   * table finds it by a hash computed once (a hop names its thread several times).
   */
  #threadKey(thread: string): string {
    let key = this.#named.get(thread);
    if (key === undefined) {
      if (this.#named.size >= 50_000) this.#named.clear();
      key = this.#keys.thread(thread);
      this.#named.set(thread, key);
    }
    return key;
  }

  #noteCurrent(thread: string): void {
    if (!this.#channel.receiving) return;
    if (this.#current.size >= 100_000) this.#current.clear();
    this.#current.add(thread);
  }

  #notePruned(id: string): void {
    if (this.#pruned.size >= 5_000) {
      this.#prunedBefore = this.#pruned;
      this.#pruned = new Set();
    }
    this.#pruned.add(id);
  }

  /** Whether this daemon should push out the thread hash's expiry now (at most once per quarter of its time to live). */
  #refresh(thread: string): boolean {
    return due(this.#refreshed, thread, this.#ttlMs / 4);
  }

  /** Another daemon's event: mirror its history entry, idle or stop notice here. */
  #apply(event: ThreadEvent): void {
    if (event.k === 'm' && event.e) {
      this.#histories.announced(event.t, event.e);
    } else if (event.k === 'i') {
      const thread = event.t;
      const idle = (): void => {
        const state = this.#registry!.thread(thread);
        if (state) state.inFlight = 0;
        this.#events!.idle(thread);
      };
      // Watchers here read the whole thread when it goes idle: entries recorded elsewhere before
      // they started following it are read first.
      const synced = typeof event.n === 'number' ? this.#histories.sync(thread, event.n, false) : undefined;
      if (synced) synced.then(idle, idle);
      else idle();
    } else if (event.k === 's') {
      this.#applyStopped(event.t);
    }
  }

  /**
   * Another daemon deleted a frame's record (its caller got an answer, or it failed there): pruned
   * here too, with the frames opened below it, and noted so that a state read from before the
   * delete cannot bring it back (see syncFrame).
   */
  #applyPruned(frameId: string): void {
    this.#notePruned(frameId);
    const frame = this.#registry!.frame(frameId);
    if (!frame) return;
    this.#deleted.add(frame); // its record is gone already
    this.#registry!.pruneFrame(frame);
  }

  #applyStopped(thread: string): void {
    const state = this.#registry!.thread(thread);
    if (state?.stopped) return; // told twice (the event and the changes list), or its own stop
    if (state) state.stopped = true;
    this.#histories.quietly(() => this.#history!.markStopped(thread));
    this.#events!.stopped(thread);
  }
}

type FrameRecord = [listener: string, caller: string, parent: string, depth: number];
