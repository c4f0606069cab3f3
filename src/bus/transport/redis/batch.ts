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
import { callScript, loadedScript } from './script-call.ts';
import { BATCH_SCRIPT, BATCH_SCRIPT_CROSS_SLOT, CHANGES_SCRIPT } from './scripts.ts';
import type { LoadReply, ReadEntry } from './types.ts';

const ONE = Promise.resolve(1);
/** A partition's changes read at most at once (see CommandBatch.read); the rest are read next time. */
export const CHANGES_PER_READ = 1_000;

/** A batch is sent early once it holds this many arguments (bounds the call's stack and script time). */
const MAX_ARGS = 1_000;

/**
 * The thread state the read script packed for an entry, as a load returns it (the history count
 * null when the read did not ask for it, see CommandBatch.read); undefined when it loaded none
 * (no thread settings, or a thread id it could not take from the record).
 */
export function unpackState(state: string | null | undefined): LoadReply | undefined {
  if (state == null) return undefined;
  if (state === '0') return null;
  const f = state.split('\0');
  return [f[0]!, f[1]!, f[2]!, f[3]!, f[4]!, f[5] || null, f[6] || null, f[7] || null];
}

/**
 * A read's entries as the script returns them, three values each in one flat list (see the
 * script's read): id, record, state for an entry in this format; id, fields, null for another.
 */
type FlatRead = Array<string | string[] | null>;

/** The entries of a read through the script, each as a ReadEntry. */
export function readEntries(flat: FlatRead): ReadEntry[] {
  const entries: ReadEntry[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    const id = flat[i] as string;
    const m = flat[i + 1] ?? null;
    entries.push(typeof m === 'string' ? [id, m, flat[i + 2] as string | null] : [id, m]);
  }
  return entries;
}

type Reply = number | LoadReply | ReadEntry[] | FlatRead | string[];

interface Waiter {
  resolve(value: Reply): void;
  reject(error: Error): void;
  /** An XADD's: the script returns nothing for it unless it failed (see answer). */
  xadd: boolean;
}

/**
 * What the script answers: results, errors and the XADDs that failed (each one's number among the
 * call's XADDs, from 1, and its message), or 'moved' (merged call, see partitioned-batch.ts).
 */
export type BatchReply = [Array<Reply | string>, string[], Array<number | string>] | 'moved';

const BATCH = loadedScript(BATCH_SCRIPT);
const BATCH_CROSS_SLOT = loadedScript(BATCH_SCRIPT_CROSS_SLOT);

/**
 * Calls the batch script (`crossSlot`: the one allowed keys of several slots of its node) with
 * `keys`, then the ARGV `parts` in order (script-call.ts: written without ioredis's generic path).
 */
export function callBatch(
  client: Redis,
  keys: readonly string[],
  parts: ReadonlyArray<readonly string[]>,
  crossSlot = false,
): Promise<BatchReply> {
  const script = crossSlot ? BATCH_CROSS_SLOT : BATCH;
  const args = [script.sha, String(keys.length)].concat(keys, ...parts);
  return callScript(client, script, args) as Promise<BatchReply>;
}

/** One script call's worth of a batch, taken out of it (CommandBatch.take): sent alone or merged. */
export interface BatchCall {
  keys: string[];
  /** ARGV[1..11] (see makeHeader). */
  header: string[];
  /** Empty when the turn queued nothing but plain reads: then no script call goes. */
  args: string[];
  /** One per result the script returns, in order. */
  waiters: Waiter[];
  /** Plain reads (see CommandBatch.read), sent as XREADGROUP commands right behind the script call. */
  reads: PlainRead[];
}

/** A batch's XACKs of one stream: the ids, and the one promise they share. */
interface Acks {
  ids: string[];
  done: Promise<void>;
  waiter: Waiter;
}

/** A read sent as XREADGROUP of its own, outside the script (see CommandBatch.read). */
interface PlainRead {
  stream: string;
  count: number;
  waiter: Waiter;
  /** The partition's changes list and where this daemon is in it (ThreadSettings.changesFrom). */
  changes?: ChangesFrom;
}

/** A partition's changes list (BusKeys.changes) and a position in it. */
export type ChangesFrom = [key: string, position: number];

/**
 * The entries of a read outside the script, with the changes of their partition read right behind
 * it when the thread store asked for them (see ThreadSettings.changesFrom).
 */
export type PlainEntries = ReadEntry[] & { changes?: ChangesReply };

/**
 * What lua/changes.lua answers: the position of the first change it returns, 1 when changes from
 * the position asked for had been trimmed away (else 0), how many, and the lines joined by '\n'.
 */
export type ChangesReply = [start: number, gap: number, count: number, lines: string];

const CHANGES = loadedScript(CHANGES_SCRIPT);

/** Reads a partition's changes from a position on (at most CHANGES_PER_READ), on `client`. */
export function readChanges(client: Redis, from: ChangesFrom): Promise<ChangesReply> {
  return callScript(client, CHANGES, [CHANGES.sha, ...changesArgs(from)]) as Promise<ChangesReply>;
}

/** The same as EVAL's arguments, for a connection that only sends commands (a reader's own). */
export function changesEval(from: ChangesFrom): string[] {
  return [CHANGES_SCRIPT, ...changesArgs(from)];
}

function changesArgs([key, from]: ChangesFrom): string[] {
  return ['2', key, `${key}:trimmed`, String(from), String(CHANGES_PER_READ)];
}

/**
 * Runs `send` with the client's sockets corked, so the commands it writes (a script call and the
 * plain reads behind it) leave in one write: on the 2-core VM the benches run on, a write to
 * Redis costs the daemon about 50 µs of CPU whatever its size (bench/redis.ts, docs/internals).
 */
export function corked(client: Redis, send: () => void): void {
  const sockets = socketsOf(client);
  for (const socket of sockets) socket.cork();
  try {
    send();
  } finally {
    for (const socket of sockets) socket.uncork();
  }
}

type Corkable = { cork(): void; uncork(): void };

function socketsOf(client: Redis): Corkable[] {
  const c = client as unknown as {
    isCluster?: boolean;
    status?: string;
    stream?: Corkable;
    nodes?(role: string): Array<{ status: string; stream?: Corkable }>;
  };
  if (c.isCluster) {
    const sockets: Corkable[] = [];
    for (const node of c.nodes?.('master') ?? [])
      if (node.status === 'ready' && node.stream) sockets.push(node.stream);
    return sockets;
  }
  return c.status === 'ready' && c.stream ? [c.stream] : [];
}

/**
 * Sends plain reads: XREADGROUP without BLOCK, each resolving with its entries as `[id, fields]`
 * (what the reader decodes from any read outside the script).
 */
export function sendReads(client: Redis, group: string, consumer: string, reads: readonly PlainRead[]): void {
  const replies: Array<Promise<ReadEntry[]>> = [];
  let from: ChangesFrom | undefined;
  for (const { stream, count, changes } of reads) {
    const args = ['GROUP', group, consumer, 'COUNT', String(count), 'STREAMS', stream, '>'];
    const reply = client.call('XREADGROUP', ...args) as Promise<Array<[string, ReadEntry[]]> | null>;
    replies.push(reply.then((r) => r?.[0]?.[1] ?? []));
    from ??= changes;
  }
  // Once per turn (a batch's reads are of one partition), behind the last read: every change made
  // before any of them was taken is in it.
  const changes = from === undefined ? undefined : readChanges(client, from);
  changes?.catch(() => {}); // without them the entries are delivered as before (their threads read)
  reads.forEach(({ waiter }, i) => {
    replies[i]!.then((entries: PlainEntries) => {
      if (!changes) return waiter.resolve(entries);
      const done = (): void => waiter.resolve(entries);
      changes.then((reply) => {
        entries.changes = reply;
        done();
      }, done);
    }, waiter.reject);
  });
}

/**
 * Settles a call's waiters with the script's answer, in queue order: each XADD's with 1 unless
 * it is among the failed, the others with their result in turn (an '!' result rejects its waiter).
 */
export function answer(
  waiters: readonly Waiter[],
  [results, errors, failed]: Exclude<BatchReply, 'moved'>,
  onError: (error: Error) => void,
): void {
  let next = 0;
  let xadds = 0;
  let f = 0;
  for (const waiter of waiters) {
    if (waiter.xadd) {
      xadds++;
      if (failed[f] === xadds) {
        waiter.reject(new Error(String(failed[f + 1])));
        f += 2;
      } else {
        waiter.resolve(1);
      }
      continue;
    }
    const value = results[next++];
    if (typeof value === 'string' && value.startsWith('!')) waiter.reject(new Error(value.slice(1)));
    else waiter.resolve((value ?? null) as Reply);
  }
  for (const error of errors) onError(new Error(error));
}

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
  /** The partition whose keys this batch carries (partitions.ts); default 0. */
  partition?: number;
  /**
   * Set by a PartitionedBatch: asked to send this batch when the turn ends (it sends the turn's
   * partitions together) instead of the batch scheduling its own flush.
   */
  defer?: () => void;
}

/**
 * What the transport's parts queue their Redis work on: one CommandBatch, or with several
 * partitions one per partition behind a PartitionedBatch (partitioned-batch.ts), which routes each
 * operation by its key's hash tag.
 */
export type BusBatch = Pick<
  CommandBatch,
  | 'pending'
  | 'hset'
  | 'prune'
  | 'stop'
  | 'pexpire'
  | 'follow'
  | 'event'
  | 'frame'
  | 'hop'
  | 'inFlight'
  | 'history'
  | 'xadd'
  | 'settle'
  | 'load'
  | 'read'
  | 'xack'
  | 'beat'
  | 'flush'
  | 'drain'
  | 'useThreadsBy'
>;

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
  /**
   * The partition's changes list and the position this daemon has applied them to, asked when a
   * turn's plain reads go out: the changes from there are read right behind them.
   */
  changesFrom?: () => ChangesFrom;
  /** History entries kept per thread, and how long a history list lives, ms. */
  historyMax: number;
  historyTtlMs: number;
}

export class CommandBatch {
  readonly #client: Redis;
  #header: string[];
  /** The thread settings in use (useThreads), if any. */
  #threads: ThreadSettings | undefined;
  #keys: string[] = [];
  #keyIndex = new Map<string, string>();
  #args: string[] = [];
  #waiters: Waiter[] = [];
  /** XACKs by stream: one XACK per stream per batch, after everything else. */
  #acks = new Map<string, Acks>();
  /**
   * Reads wait for the end of the turn: a part of the batch sent early (it filled up) carries
   * the writes so far, and the reads go with the rest, taking as many entries as are wanted then.
   */
  #reads: Array<{
    stream: string;
    count: number | (() => number);
    waiter: Waiter;
    plain: boolean;
    history: boolean;
  }> = [];
  /**
   * Messages published (+1) per thread key in this batch, less settles netted out against them;
   * sent first in the batch. An increment may move ahead of a settle queued before it: the count
   * then never touches zero in between, so no idle notice goes out for a thread that is busy again.
   */
  #inFlightDeltas = new Map<string, number>();
  /**
   * The writes of a message being published (its frame, its hop, its history entry: they come in
   * that order), held back to go as one `pub` operation with the XADD that follows them. `stage`
   * is the last part written; see publishing().
   */
  #open: string[] | undefined;
  #openStage = 0;
  #scheduled: NodeJS.Immediate | undefined;
  /** The last batch sent, settled when Redis answered it (batches are answered in order). */
  #last: Promise<unknown> = Promise.resolve();

  constructor(
    client: Redis,
    private readonly options: CommandBatchOptions,
  ) {
    this.#client = client;
    this.#header = this.#makeHeader(undefined);
  }

  /** Turns on thread state with reads. */
  useThreads(settings: ThreadSettings): void {
    this.#header = this.#makeHeader(settings);
    this.#threads = settings;
  }

  /** useThreads with the settings of this batch's partition (the shared thread store calls it once). */
  useThreadsBy(settingsFor: (partition: number) => ThreadSettings): void {
    this.useThreads(settingsFor(this.options.partition ?? 0));
  }

  /** Whether anything is queued and not yet sent. */
  get pending(): boolean {
    return (
      this.#args.length > 0 ||
      this.#open !== undefined ||
      this.#acks.size > 0 ||
      this.#reads.length > 0 ||
      this.#inFlightDeltas.size > 0
    );
  }

  hset(key: string, field: string, value: string): void {
    this.#push3('hset', this.#key(key), field, value);
  }

  /**
   * The record of frame `frameId` deleted from the thread hash; when there was one, the deletion
   * goes on the partition's changes list (see the script's prune).
   */
  prune(threadKey: string, frameId: string): void {
    this.#push2('prune', this.#key(threadKey), frameId);
  }

  /** The thread stopped: its hash says so, the changes list has it and the others hear it (stop). */
  stop(threadKey: string): void {
    this.#push1('stop', this.#key(threadKey));
  }

  pexpire(key: string, ms: string): void {
    this.#push2('pexpire', this.#key(key), ms);
  }

  /** The thread is followed live until `until` (epoch ms): its history entries are announced. */
  follow(threadKey: string, until: number, ms: number): void {
    this.#push3('follow', this.#key(threadKey), String(until), String(ms));
  }

  /** A line for the other daemons' event listeners (an idle or stop notice). */
  event(text: string): void {
    this.#push1('event', text);
  }

  /** A frame opened in the thread: hash field `field` (f:<id>) is its record. */
  frame(threadKey: string, field: string, record: string): void {
    const p = this.#publishing(threadKey, 0);
    p[2] = field;
    p[3] = record;
  }

  /** One more hop in the thread; its expiry pushed out when `refresh`. */
  hop(threadKey: string, refresh: boolean): void {
    this.#publishing(threadKey, 1)[4] = refresh ? '1' : '0';
  }

  /** One more message of the thread in flight. */
  inFlight(threadKey: string): void {
    this.#inFlightDeltas.set(threadKey, (this.#inFlightDeltas.get(threadKey) ?? 0) + 1);
    this.#queued();
  }

  /** Appends `entry` to a thread's history, numbers it in the thread and announces it. */
  history(threadKey: string, entry: string, refresh: boolean): void {
    const p = this.#publishing(threadKey, 2);
    p[5] = entry;
    p[6] = refresh ? '1' : '0';
  }

  /** XADD of a message record; resolves (with 1) once Redis has the entry. */
  xadd(stream: string, record: string): Promise<number> {
    return this.#withResult((w) => {
      this.#waiters.push(w); // before the arguments: they may fill the batch and send it
      const p = this.#open;
      if (p) {
        this.#open = undefined;
        if (p[2] === '' && p[4] !== '' && p[5] !== '') {
          // No frame, a hop and an entry (most sends): the script's shorter form of pub.
          const refresh = p[4] === '1' ? (p[6] === '1' ? '3' : '1') : p[6] === '1' ? '2' : '0';
          this.#args.push('send', p[1]!, refresh, p[5]!, this.#key(stream), record);
        } else {
          p[7] = this.#key(stream);
          p[8] = record;
          for (const arg of p) this.#args.push(arg);
        }
        this.#queued();
      } else {
        this.#push2('xadd', this.#key(stream), record);
      }
    }, true) as Promise<number>;
  }

  /**
   * In-flight count minus one; at zero an idle notice is announced. Resolves with what is left.
   * A message of the same thread published in this batch still to go (a handler's output, as its
   * input settles) nets out against it: neither goes to Redis, nothing is announced, and it
   * resolves with 1 (at least that one is in flight). A batch runs as one script, so no other
   * daemon can see the count between the two anyway.
   */
  settle(threadKey: string): Promise<number> {
    const delta = this.#inFlightDeltas.get(threadKey);
    if (delta !== undefined && delta > 0) {
      if (delta === 1) this.#inFlightDeltas.delete(threadKey);
      else this.#inFlightDeltas.set(threadKey, delta - 1);
      return ONE;
    }
    return this.#withResult((w) => {
      this.#waiters.push(w);
      this.#push1('settle', this.#key(threadKey));
    }) as Promise<number>;
  }

  /** A thread's record (see the script), its expiry pushed out when `refresh`. */
  load(threadKey: string, refresh: boolean, frame: string): Promise<LoadReply> {
    return this.#withResult((w) => {
      this.#waiters.push(w);
      this.#push3('load', this.#key(threadKey), refresh ? '1' : '0', frame);
    }) as Promise<LoadReply>;
  }

  /**
   * XREADGROUP of up to `count` new entries, without BLOCK (a blocking command cannot run in a
   * script, and would stall the batch); with thread settings, each entry's thread state too. A
   * function is asked for the count when the batch goes out (at least 1).
   *
   * `plain`: an XREADGROUP command of its own, sent right behind the script call in the same write,
   * and no thread state. The script would read no state for the entries of a stream of messages
   * that carry their frames anyway, and passing entries through Lua costs Redis several times what
   * the command costs: each is copied into a Lua string and back out (≈ 3 µs an entry against 0.6,
   * measured with INFO commandstats; docs/internals/benchmarks.md).
   *
   * `history`: each entry's state with its thread's history count (an LLEN, and the field it
   * adds up with), which only a listener that reads its threads' histories needs (an agent); without
   * it the count is null.
   */
  read(stream: string, count: number | (() => number), plain = false, history = true): Promise<ReadEntry[]> {
    return this.#withResult((waiter) => {
      this.#reads.push({ stream, count, waiter, plain, history });
      this.#schedule();
    }) as Promise<ReadEntry[]>;
  }

  /**
   * XACK, merged with the other acks of the batch for the same stream; they share its promise (a
   * reader acks every message it handles: one promise and waiter per turn, not per message).
   */
  xack(stream: string, id: string): Promise<void> {
    let acks = this.#acks.get(stream);
    if (!acks) {
      let waiter: Waiter | undefined;
      const done = new Promise<void>((resolve, reject) => {
        waiter = { resolve: () => resolve(), reject, xadd: false };
      });
      acks = { ids: [], done, waiter: waiter! };
      this.#acks.set(stream, acks);
    }
    acks.ids.push(id);
    this.#queued();
    return acks.done;
  }

  /**
   * The heartbeat of the entries `ids` of a stream (see the script's beat): resolves with the ids
   * another consumer owns now, each followed by its owner. It rides in the next batch, so marking
   * costs no command of its own.
   */
  beat(stream: string, ids: readonly string[]): Promise<string[]> {
    return this.#withResult((w) => {
      this.#waiters.push(w);
      this.#close();
      this.#args.push('beat', this.#key(stream), String(ids.length));
      for (const id of ids) this.#args.push(id);
      this.#queued();
    }) as Promise<string[]>;
  }

  /**
   * Sends what is queued now: when the turn ends, at close, and early when the batch has grown
   * (`early`: Redis starts on the writes while this daemon works on the rest of the turn; the
   * reads wait for the end of it).
   */
  flush(early = false): void {
    const call = this.take(early);
    if (call) this.send(call);
  }

  /**
   * What flush would send now, taken out of the batch (undefined: nothing to send). `early`: the
   * reads stay queued for the end of the turn (see flush).
   */
  take(early = false): BatchCall | undefined {
    if (early && this.#reads.length > 0) {
      this.#schedule();
    } else if (this.#scheduled) {
      clearImmediate(this.#scheduled);
      this.#scheduled = undefined;
    }
    this.#close();
    if (!this.pending) return undefined;
    const reads: PlainRead[] = [];
    if (!early) {
      for (const { stream, count, waiter, plain, history } of this.#reads) {
        const n = Math.max(1, typeof count === 'number' ? count : count());
        if (plain) {
          reads.push({ stream, count: n, waiter, changes: this.#threads?.changesFrom?.() });
          continue;
        }
        this.#waiters.push({
          resolve: (flat) => waiter.resolve(readEntries(flat as FlatRead)),
          reject: waiter.reject,
          xadd: false,
        });
        this.#args.push('read', this.#key(stream), String(n), history ? '1' : '0');
      }
      this.#reads = [];
    }
    if (this.#args.length === 0 && this.#acks.size === 0 && this.#inFlightDeltas.size === 0) {
      return reads.length > 0 ? { keys: [], header: this.#header, args: [], waiters: [], reads } : undefined;
    }
    if (this.#inFlightDeltas.size > 0) {
      // Nothing in the batch depends on its position: first keeps a settle from reaching zero early.
      const head: string[] = [];
      for (const [threadKey, delta] of this.#inFlightDeltas) {
        if (delta !== 0) head.push('inc', this.#key(threadKey), String(delta));
      }
      this.#inFlightDeltas = new Map();
      if (head.length > 0) this.#args = head.concat(this.#args);
    }
    for (const [stream, acks] of this.#acks) {
      this.#args.push('xack', this.#key(stream), String(acks.ids.length));
      for (const id of acks.ids) this.#args.push(id);
      this.#waiters.push(acks.waiter);
    }
    const call: BatchCall = {
      keys: this.#keys,
      header: this.#header,
      args: this.#args,
      waiters: this.#waiters,
      reads,
    };
    this.#keys = [];
    this.#keyIndex = new Map();
    this.#args = [];
    this.#waiters = [];
    this.#acks = new Map();
    return call;
  }

  /**
   * Sends a call taken from this batch as a script call of its own, and its plain reads behind it;
   * resolves when the script call is answered.
   */
  send(call: BatchCall): Promise<unknown> {
    const { keys, header, args, waiters, reads } = call;
    corked(this.#client, () => {
      if (args.length > 0) {
        this.#last = callBatch(this.#client, keys, [header, args]).then(
          (reply) => {
            if (reply === 'moved') throw new Error('batch answered "moved" without a merged call');
            answer(waiters, reply, this.options.onError);
          },
          (error: Error) => {
            for (const w of waiters) w.reject(error);
            this.options.onError(error);
          },
        );
      }
      this.sendReads(reads);
    });
    return this.#last;
  }

  /** Sends plain reads taken from this batch (see read). */
  sendReads(reads: readonly PlainRead[]): void {
    if (reads.length > 0) sendReads(this.#client, this.options.group, this.options.consumer, reads);
  }

  /** The client the batch sends on (a merged call goes on it too). */
  get client(): Redis {
    return this.#client;
  }

  /** Reports a failure of a whole call, or of an operation that has no promise. */
  reportError(error: Error): void {
    this.options.onError(error);
  }

  /** Sends what is queued and resolves when Redis has answered every batch sent so far. */
  drain(): Promise<void> {
    this.flush();
    return this.#last.then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * The script's ARGV[1..11]. Without thread settings no thread state or history is written or
   * read (the thread prefix is ''), so their limits are sent as '0', never read: every default
   * comes from whoever sets them (the config schema's, through RedisThreadStore).
   */
  #makeHeader(threads: ThreadSettings | undefined): string[] {
    const o = this.options;
    return [
      o.channel,
      o.origin,
      o.group,
      o.consumer,
      threads?.threadPrefix ?? '',
      threads ? String(threads.historyMax) : '0',
      threads ? String(threads.historyTtlMs) : '0',
      threads ? String(threads.threadTtlMs) : '0',
      o.formatVersion,
      threads?.followingKey ?? '',
      threads?.historyPrefix ?? '',
    ];
  }

  #withResult(queue: (waiter: Waiter) => void, xadd = false): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => queue({ resolve, reject, xadd }));
  }

  /**
   * The open `pub` operation for a write of `stage` (0 frame, 1 hop, 2 history entry) in the
   * thread: the one already open when it is the same thread's and this part comes later in it, else
   * a new one (the open one goes as it is). Parts not written stay ''. Packing consecutive writes
   * into one operation changes nothing in their order.
   */
  #publishing(threadKey: string, stage: number): string[] {
    const open = this.#open;
    const index = this.#key(threadKey);
    if (open && open[1] === index && this.#openStage < stage) {
      this.#openStage = stage;
      return open;
    }
    this.#close();
    this.#open = ['pub', index, '', '', '', '', '', '', ''];
    this.#openStage = stage;
    this.#schedule();
    return this.#open;
  }

  /** Queues the open `pub` operation as it is, without an XADD (whoever calls this queues next). */
  #close(): void {
    const open = this.#open;
    if (!open) return;
    this.#open = undefined;
    for (const arg of open) this.#args.push(arg);
  }

  // push1..3: no rest-argument array per operation (this runs several times per hop).
  #push1(op: string, a: string): void {
    this.#close();
    this.#args.push(op, a);
    this.#queued();
  }

  #push2(op: string, a: string, b: string): void {
    this.#close();
    this.#args.push(op, a, b);
    this.#queued();
  }

  #push3(op: string, a: string, b: string, c: string): void {
    this.#close();
    this.#args.push(op, a, b, c);
    this.#queued();
  }

  #schedule(): void {
    if (this.options.defer) this.options.defer();
    else this.#scheduled ??= setImmediate(this.#flushLater);
  }

  #queued(): void {
    if (this.#args.length >= MAX_ARGS) this.flush(true);
    else this.#schedule();
  }

  readonly #flushLater = (): void => {
    this.#scheduled = undefined;
    this.flush();
  };

  /** The 1-based KEYS index of `key` (a string, as ARGV carries it). */
  #key(key: string): string {
    let index = this.#keyIndex.get(key);
    if (index === undefined) {
      this.#keys.push(key);
      index = String(this.#keys.length);
      this.#keyIndex.set(key, index);
    }
    return index;
  }
}
