/**
 * One listener's reader: reads no more entries than the listener has free slots, hands each to
 * `deliver` and acknowledges it once its handler has finished and its outputs are queued (in the
 * same script call as their XADDs, after them), or once `deliver` resolved. While there is work, a
 * read is one operation in the transport's command batch (no BLOCK, and the entries' thread state
 * comes back with them, so a hop costs no separate load; or, while the entries need none (they
 * carry their frames, or their frames and threads are held here), a plain XREADGROUP sent behind
 * the batch's script call, with the partition's changes read right behind it, see #plain); when a
 * read finds nothing it waits with XREADGROUP and a finite BLOCK on its own connection (a blocking
 * read freezes the connection it runs on, so it never shares one), the changes behind it too. A
 * rejected delivery or an entry that cannot be decoded stays unacknowledged: the reaper
 * (transport.ts) gives it to some daemon again later, and dead-letters it after too many tries.
 *
 * After a (re)connect the loop first re-reads this consumer's own pending entries (ID 0), so work
 * this daemon had taken but not finished before Redis restarted is not stranded.
 */
import type { Redis } from 'ioredis';
import { within } from '../../lifecycle.ts';
import type { Message } from '../../message.ts';
import type { Deliver } from '../types.ts';
import { type ChangesFrom, type ChangesReply, changesEval, type PlainEntries, unpackState } from './batch.ts';
import { DecodeFailure, decodeMessage, decodeRecord, recordStartsWith } from './codec.ts';
import type { ResolvedRedisBusOptions } from './options.ts';
import { type CommandRunner, ReadConnection } from './read-connection.ts';
import type { LoadReply, ReadEntry, StreamEntry } from './types.ts';

export type { StreamEntry } from './types.ts';

/** What a reader needs from its transport (commands on the shared connection). */
export interface ReaderHost {
  readonly options: ResolvedRedisBusOptions;
  /** The transport's own client: on a cluster its slot map says which node a reader blocks on. */
  readonly client: Redis;
  ensureGroup(client: CommandRunner, stream: string): Promise<void>;
  /**
   * Reads new entries without blocking, in the transport's command batch (one round trip shared
   * with the daemon's writes), with each entry's thread state when a thread store wants it;
   * `plain`: without it, as a plain XREADGROUP behind the batch's script call.
   */
  readNow(stream: string, count: number | (() => number), plain?: boolean): Promise<ReadEntry[]>;
  /** The thread state read with the message about to be delivered (undefined: that delivery is over). */
  preloaded(message: Message | undefined, load: LoadReply): void;
  /**
   * Around the dispatch of a read's entries: before, the changes of their partition read right
   * behind them (undefined: none, as with a read through the script, whose entries come with their
   * thread state); after (undefined again), how many of the deliveries since could not go on this
   * daemon's copy of their thread (thread-store.ts): with none, the next read may be plain.
   * Without a shared thread store always 1.
   */
  trusting(partition: number, changes: ChangesReply | undefined): number;
  /** Where a blocking read's partition's changes are read from (undefined: nobody needs them). */
  changesFrom(partition: number): ChangesFrom | undefined;
  ack(stream: string, id: string): Promise<void>;
  recordFailure(id: string, reason: string, partition?: number): void;
}

/**
 * An entry stays taken for two or three of the daemon's round trips to Redis: the one that reads
 * it, the one that carries its handler's outputs and its XACK, and, when the handler finished
 * late in a turn, part of the next. Reading up to maxInFlight entries every round trip needs
 * room for more than twice that many: with twice, reads waited for acks, and two bench daemons
 * moved about 3% fewer messages.
 */
const TAKEN_ROUND_TRIPS = 3;

/** What #inFlight holds for an entry whose delivery is starting (see dispatch). */
const STARTING: Promise<void> = Promise.resolve();

/**
 * The delivery slots of one listener (its maxInFlight), shared by its readers: one per partition
 * (partitions.ts), or the one reader alone. Readers of several partitions may together read more
 * entries than there are free slots (each blocking read asks for what is free when it starts):
 * those wait in their reader, held and heartbeated, for a slot.
 */
export class SlotPool {
  used = 0;
  readonly #members: Array<{ wake(): void }> = [];

  constructor(readonly max: number) {}

  join(member: { wake(): void }): void {
    this.#members.push(member);
  }

  /** A slot came free: every reader of the listener may start a waiting entry or read again. */
  released(): void {
    for (const member of this.#members) member.wake();
  }
}

export class StreamReader {
  /** Entries taken and not yet acknowledged (delivering, or delivered and being acked). */
  readonly #inFlight = new Map<string, Promise<void>>();
  /**
   * The listener's slots: of the entries taken, deliveries whose handler has not finished yet
   * count (the listener's, over all its partitions' readers). A handled
   * delivery waiting for its outputs' confirmation holds no slot (see Deliver), but the entries
   * taken in all stay below TAKEN_ROUND_TRIPS times maxInFlight.
   */
  readonly #slots: SlotPool;
  /** Entries read while every slot of the listener was taken, waiting for one (see SlotPool). */
  readonly #waiting: Array<(start: boolean) => void> = [];
  /**
   * When every slot is taken, the next read waits for this many to free up: reading one entry per
   * freed slot would cost a round trip per message and cap throughput at one read at a time.
   */
  readonly #refill: number;
  /**
   * Entries whose delivery failed here. A re-read of our own pending list skips them: the reaper
   * retries them after claimIdleMs and dead-letters them on time, which a re-read would not.
   */
  readonly #failed = new Set<string>();
  readonly #client: ReadConnection;
  #recover = true;
  /**
   * Read with a plain XREADGROUP next (CommandBatch.read), not in the script: the last read found
   * only entries that needed no thread state from Redis (messages carrying their frames, or into
   * frames and threads held here: see ReaderHost.trusting), so the script's state would go unused.
   * Set again by every read that found entries; an entry that does want its state and comes
   * through a plain read is loaded when delivered (one round trip more, once).
   */
  #plain = false;
  #stopped = false;
  /** Stopped with `finish`: entries read and waiting for a slot still run (see stop). */
  #finishing = false;
  /** When stop() gives up waiting for in-flight deliveries (epoch ms), set by its first call. */
  #stopDeadline = 0;
  #slotWaiter: (() => void) | undefined;
  readonly #loopDone: Promise<void>;
  #lastError = '';

  constructor(
    private readonly host: ReaderHost,
    readonly listener: string,
    readonly stream: string,
    private readonly deliver: Deliver,
    readonly maxInFlight: number,
    /** The partition of the stream (partitions.ts). */
    readonly partition = 0,
    /** The listener's slots, when it has readers on several partitions; else this reader's own. */
    slots?: SlotPool,
    /**
     * Reading starts once this settles: a reader that took over a partition's lease (leases.ts)
     * first claims what the last holder left, so those entries go before newer ones of their thread.
     */
    ready?: Promise<unknown>,
  ) {
    this.#slots = slots ?? new SlotPool(maxInFlight);
    this.#slots.join({ wake: () => this.#wake() });
    const { options } = host;
    this.#client = new ReadConnection(
      host.client,
      options,
      stream,
      (message) => options.logger.warn({ listener, stream }, `redis reader lost its connection: ${message}`),
      // Every reconnect re-reads our own pending entries first: Redis may have come back from disk.
      () => {
        this.#recover = true;
      },
    );
    this.#refill = Math.max(1, Math.floor(maxInFlight / 4));
    this.#loopDone = ready ? ready.then(() => this.#loop()) : this.#loop();
  }

  /** Slots not taken by deliveries in progress. */
  get free(): number {
    return this.#slots.max - this.#slots.used;
  }

  /** How many entries a read may take now. */
  get #room(): number {
    return Math.min(this.free, TAKEN_ROUND_TRIPS * this.#slots.max - this.#inFlight.size);
  }

  get #mayRead(): boolean {
    const room = this.#room;
    return room > 0 && (room >= this.#refill || this.#slots.used === 0);
  }

  get stopping(): boolean {
    return this.#stopped;
  }

  /** Ids of entries being delivered now (for the heartbeat). */
  inFlightIds(): string[] {
    return [...this.#inFlight.keys()];
  }

  has(id: string): boolean {
    return this.#inFlight.has(id);
  }

  async #loop(): Promise<void> {
    const { options } = this.host;
    let groupReady = false;
    let cursor = '0';
    let failures = 0;
    while (!this.#stopped) {
      try {
        if (!groupReady) {
          await this.host.ensureGroup(this.#client, this.stream);
          groupReady = true;
        }
        if (!this.#mayRead) {
          await new Promise<void>((resolve) => {
            this.#slotWaiter = resolve;
          });
          continue;
        }
        const room = this.#room;
        if (this.#recover) {
          const entries = await this.#read(room, cursor, false);
          if (entries.length === 0) {
            this.#recover = false;
            cursor = '0';
            continue;
          }
          cursor = entries[entries.length - 1]![0];
          if (!this.#stopped || this.#finishing) this.dispatch(entries, false);
          continue;
        }
        // Non-blocking first: while the stream has entries this is the cheap path. How many is
        // decided when the batch goes out: slots freed by handlers finishing in this same turn
        // count too, so the read rides along with those handlers' outputs.
        const entries: PlainEntries = await this.host.readNow(
          this.stream,
          () => Math.max(room, this.#room),
          this.#plain,
        );
        if (entries.length > 0) {
          this.#dispatchRead(entries);
        } else {
          const entries = await this.#read(room, '>', true);
          // What a blocking read found decides the next read too: deliveries that had to read their
          // threads would hold their outputs back past the next read, which would find nothing and
          // block again.
          if (entries.length > 0) this.#dispatchRead(entries);
        }
        failures = 0;
      } catch (error) {
        if (this.#stopped) break;
        const message = (error as Error).message ?? String(error);
        if (/NOGROUP/.test(message)) {
          // The stream or group vanished (Redis restarted empty, or someone deleted it): recreate.
          groupReady = false;
        } else if (message !== this.#lastError) {
          options.logger.warn({ listener: this.listener }, `redis read failed: ${message}`);
        }
        this.#lastError = message;
        this.#recover = true;
        cursor = '0';
        failures++;
        await sleep(Math.min(50 * 2 ** Math.min(failures, 5), 1_000));
      }
    }
  }

  /**
   * Dispatches a new read's entries, their partition's changes applied first. Entries that all went
   * on this daemon's copy of their threads (or needed no state) make the next read plain; one that
   * had to read its thread makes it a script's.
   */
  #dispatchRead(entries: PlainEntries): void {
    this.host.trusting(this.partition, entries.changes);
    if (!this.#stopped || this.#finishing) this.dispatch(entries, false);
    this.#plain = this.host.trusting(this.partition, undefined) === 0 || !entries.some(wantsState);
  }

  /**
   * XREADGROUP on the reader's own connection; a blocking one with its partition's changes read
   * right behind it (see PlainEntries), as plain reads in the batch are.
   */
  async #read(count: number, from: string, block: boolean): Promise<StreamEntry[] & PlainEntries> {
    const { options } = this.host;
    const args = ['GROUP', options.group, options.consumer, 'COUNT', String(count)];
    if (block) args.push('BLOCK', String(options.blockMs));
    args.push('STREAMS', this.stream, from);
    const read = this.#client.call('XREADGROUP', ...args);
    const since = block ? this.host.changesFrom(this.partition) : undefined;
    const changes = since && this.#client.call('EVAL', ...changesEval(since));
    changes?.catch(() => {});
    const reply = (await read) as Array<[string, StreamEntry[]]> | null;
    const entries: StreamEntry[] & PlainEntries = reply?.[0]?.[1] ?? [];
    if (changes && entries.length > 0) {
      try {
        entries.changes = (await changes) as ChangesReply;
      } catch {
        // Without them the entries' threads are read, as before.
      }
    }
    return entries;
  }

  /**
   * Hands entries to `deliver`. Entries already being delivered here are skipped: a re-read of our
   * own pending list, or a claim, can return them again while their first delivery still runs.
   */
  dispatch(entries: readonly (StreamEntry | ReadEntry)[], claimed: boolean): void {
    for (const entry of entries) {
      const id = entry[0];
      if (this.#inFlight.has(id)) continue;
      if (claimed) this.#failed.delete(id);
      else if (this.#failed.has(id)) continue;
      // A batched read gives [id, record, state] for an entry in this format, [id, fields] otherwise.
      const body = typeof entry[1] === 'string' ? entry[1] : undefined;
      let message: Message;
      try {
        message = body !== undefined ? decodeRecord(body) : decodeMessage(entry[1] as string[] | null);
      } catch (error) {
        const reason = error instanceof DecodeFailure ? error.message : String(error);
        this.host.options.logger.warn(
          { listener: this.listener, entry: id },
          `stream entry refused: ${reason}${claimed ? ' (claimed)' : ''}`,
        );
        this.#noteFailure(id, `cannot decode: ${reason}`);
        continue;
      }
      if (this.#slots.used >= this.#slots.max) {
        // Read by this partition's reader while the others took the listener's slots: it waits,
        // held (heartbeated, never re-read), and loads its thread state when it starts.
        const started = new Promise<boolean>((resolve) => this.#waiting.push(resolve));
        const done = started.then((start) => (start ? this.#run(id, message) : this.#finished(id)));
        this.#inFlight.set(id, done);
        continue;
      }
      this.#slots.used++;
      // The thread store takes the state read with the entry when `deliver` asks for it, which it
      // does at once; afterwards it is stale and dropped.
      const state = body !== undefined ? unpackState(entry[2] as string | null) : undefined;
      const preload = state !== undefined && recordStartsWith(body!, message);
      if (preload) this.host.preloaded(message, state);
      // In flight before the delivery starts: #run takes it out when it ends, which may be at once
      // (a delivery that throws before its first await).
      this.#inFlight.set(id, STARTING);
      const done = this.#run(id, message);
      if (preload) this.host.preloaded(undefined, null);
      if (this.#inFlight.has(id)) this.#inFlight.set(id, done);
    }
  }

  #wake(): void {
    while (
      this.#waiting.length > 0 &&
      this.#slots.used < this.#slots.max &&
      (!this.#stopped || this.#finishing)
    ) {
      this.#slots.used++;
      this.#waiting.shift()!(true);
    }
    if (this.#slotWaiter && this.#mayRead) {
      const wake = this.#slotWaiter;
      this.#slotWaiter = undefined;
      wake();
    }
  }

  /**
   * Delivers an entry and acks it; then it is no longer in flight. That ending is in here, not a
   * `.finally` on the call, which cost each delivery a promise, three closures and two turns of
   * the microtask queue (the ack's failure likewise is caught here, not with `.catch`).
   */
  async #run(id: string, message: Message): Promise<void> {
    let holding = true;
    let acked: Promise<void> | undefined;
    const release = (): void => {
      if (!holding) return;
      holding = false;
      this.#slots.used--;
      this.#slots.released();
    };
    // The handler has finished and its outputs are queued: the XACK is queued right behind them,
    // so it goes in the same script call, after their XADDs. A crash then loses both or neither,
    // never leaving outputs in Redis with their input still pending, and the entry is taken one
    // round trip less.
    const handled = (): void => {
      if (holding) acked = this.host.ack(this.stream, id);
      release();
    };
    try {
      try {
        await this.deliver(message, handled);
        release();
      } catch (error) {
        release();
        const reason = error instanceof Error ? error.message : String(error);
        const { logger } = this.host.options;
        const where = { listener: this.listener, entry: id, message: message.id, thread: message.thread };
        if (acked) {
          // Its handler had finished and the entry is acknowledged: nothing is left to redeliver.
          logger.warn(where, `delivery failed after its handler finished: ${reason}`);
        } else {
          logger.warn(where, `delivery failed; left for redelivery: ${reason}`);
          this.#noteFailure(id, `delivery failed: ${reason}`);
          return;
        }
      }
      // The slot is free again, but the entry stays in flight (heartbeated, never re-read) until
      // the ack is through, even if Redis is down meanwhile.
      try {
        await (acked ?? this.host.ack(this.stream, id));
      } catch (error) {
        this.host.options.logger.warn({ entry: id }, `ack failed: ${(error as Error).message}`);
      }
    } finally {
      this.#finished(id);
    }
  }

  #finished(id: string): void {
    this.#inFlight.delete(id);
    this.#wake();
  }

  #noteFailure(id: string, reason: string): void {
    // Bounded: forgetting an id only means a re-read may retry it once more before the reaper does.
    if (this.#failed.size >= 10_000) this.#failed.clear();
    this.#failed.add(id);
    this.host.recordFailure(id, reason, this.partition);
  }

  /**
   * Stops reading; in-flight deliveries finish and are acknowledged, until `deadline` (epoch ms;
   * default closeTimeoutMs after the first call), whatever Redis does. Entries read but not yet
   * handed over, and deliveries cut off by the deadline, stay pending for this consumer and are
   * claimed by others once its heartbeat has stopped. With `finish` the entries read are all
   * delivered here (the partition is being handed over, see leases.ts).
   */
  async stop(deadline?: number, finish = false): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#finishing = finish;
      this.#stopDeadline = Date.now() + this.host.options.closeTimeoutMs;
      const wake = this.#slotWaiter;
      this.#slotWaiter = undefined;
      wake?.();
      // Entries still waiting for a slot stay pending in Redis, for another daemon to claim; or,
      // handing a partition over (`finish`), they run here first, so none goes after a newer one.
      if (!finish) for (const start of this.#waiting.splice(0)) start(false);
      // Disconnecting rejects a blocked XREADGROUP at once instead of waiting out its BLOCK.
      this.#client.disconnect();
    }
    const until = Math.min(deadline ?? this.#stopDeadline, this.#stopDeadline);
    // The loop ends at once, unless it waits for a read in the transport's batch (Redis away or
    // slow): that one ends when the transport drops its connection.
    await within(this.#loopDone, until - Date.now());
    if (this.#inFlight.size > 0) {
      await within(Promise.allSettled([...this.#inFlight.values()]), until - Date.now());
    }
  }
}

/**
 * Whether a read entry's message wants the thread state the read script loads: one that came
 * with its state, or one read plainly that does not carry its frame (the script's test).
 */
function wantsState(entry: ReadEntry): boolean {
  if (entry.length === 3) return entry[2] != null;
  const fields = entry[1];
  const body = fields?.[2] === 'm' ? fields[3] : undefined;
  return typeof body === 'string' && !body.includes(',"frameDepth":');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
