/**
 * The Redis Streams transport: several daemons share one organism. Each listener has a stream
 * (`organism:{group}:in:<listener>`), the organism one consumer group, each daemon one consumer.
 *
 * - publish: XADD; resolves when Redis has the entry (and waits out a Redis restart rather than fail).
 * - deliver: one StreamReader per listener (reader.ts); XACK only after the handler finished, in
 *   the same script call as its outputs' XADDs and after them (or after a delivery that produced
 *   nothing resolved).
 * - XADDs, non-blocking reads, XACKs and the shared thread store's reads and writes made in one
 *   event-loop turn go to Redis as one script call (batch.ts), which keeps a hop's Redis cost to
 *   about two batched round trips (read, publish) instead of five commands of its own.
 * - heartbeat (heartbeat.ts): every heartbeatMs the entries held here are marked alive (re-claimed
 *   by us with JUSTID, while still ours, as an operation of the command batch), so no other daemon
 *   takes live work, however long the handler runs.
 * - reaper: every reaperIntervalMs, entries idle longer than claimIdleMs (a few missed heartbeats:
 *   their consumer died, or a delivery failed) are dead-lettered when they have been delivered
 *   maxDeliveries times, and otherwise claimed with XAUTOCLAIM (cursor followed until 0-0) and
 *   delivered here; and each stream is trimmed below its oldest unacknowledged entry, never above it.
 */
import type { Redis } from 'ioredis';
import { redactString } from '../../../audit/redact.ts';
import { TransportError } from '../../../errors.ts';
import { within } from '../../lifecycle.ts';
import type { Message } from '../../message.ts';
import type { Deliver, SubscribeOptions, Subscription, Transport } from '../types.ts';
import { type BusBatch, type ChangesFrom, type ChangesReply, CommandBatch } from './batch.ts';
import { decodeRecord, encodeRecord, FORMAT_VERSION } from './codec.ts';
import { type BusConnection, busClientOptions, openBusClient, scrubUrl } from './connection.ts';
import { type DeadLetter, deadLetterCount, readDeadLetters } from './dead-letter.ts';
import { Heartbeat } from './heartbeat.ts';
import { ListenerLeases } from './leases.ts';
import {
  BusKeys,
  defaultRedisBusOptions,
  type RedisBusOptions,
  type ResolvedRedisBusOptions,
} from './options.ts';
import { PartitionedBatch } from './partitioned-batch.ts';
import type { CommandRunner } from './read-connection.ts';
import { type ReaderHost, SlotPool, StreamReader } from './reader.ts';
import { Reaper } from './reaper.ts';
import type { LoadReply, ReadEntry, RedisTransportStats } from './types.ts';

/** A subscribed listener: its readers now, and how to stop them. */
interface Subscribed {
  readers(): StreamReader[];
  stop(deadline?: number): Promise<void>;
  /** With partitions: who reads which (leases.ts). */
  leases?: ListenerLeases;
}

/** Failure reasons are kept this long (seconds) for the dead-letter record. */
const FAILURE_TTL_S = 24 * 3600;
/** Streams are trimmed at most this often (ms). */
const TRIM_EVERY_MS = 5_000;

/** What a transport's reads hand the shared thread store (RedisThreadStore). */
export interface ReadThreads {
  preload(thread: string, frame: string, reply: LoadReply): void;
  trusting(partition: number, changes: ChangesReply | undefined): number;
  changesFrom(partition: number): ChangesFrom;
}

export class RedisTransport implements Transport, ReaderHost {
  readonly name = 'redis';
  readonly options: ResolvedRedisBusOptions;
  readonly keys: BusKeys;
  readonly stats: RedisTransportStats = { published: 0, acked: 0, claimed: 0, deadLettered: 0, lost: 0 };
  readonly #connection: BusConnection;
  /** Each subscribed listener's reader, or with partitions its leases and their readers. */
  readonly #readers = new Map<string, Subscribed>();
  /** Each listener's stream keys, one per partition. */
  readonly #inboxes = new Map<string, string[]>();
  /** Streams of listeners that do not read their threads' histories (SubscribeOptions.readsHistory). */
  readonly #noHistory = new Set<string>();
  readonly #reaper: Reaper;
  readonly #heartbeat: Heartbeat;
  readonly #timers: NodeJS.Timeout[] = [];
  #reaping = false;
  #lastTrim = 0;
  #closing: Promise<void> | undefined;
  #lastBatchError = '';
  /**
   * What this daemon sends in one event-loop turn, as one script call (batch.ts): XADDs, XACKs and
   * the shared thread store's reads and writes, in order, so a message's thread state is written
   * before the XADD that publishes it.
   */
  readonly batch: BusBatch;
  /**
   * The shared thread store, once it serves this transport's reads (useThreadStore): the state
   * read with an entry goes to it, and the changes read behind entries (see ReaderHost.trusting).
   */
  #threads: ReadThreads | undefined;
  /** Called for each message this daemon dead-letters (after the move). */
  onDeadLetter: ((message: Message) => void) | undefined;

  constructor(options: RedisBusOptions) {
    this.options = defaultRedisBusOptions(options);
    this.keys = new BusKeys(this.options.group, this.options.partitions);
    this.#connection = openBusClient(
      this.options.url,
      busClientOptions(this.options.connectTimeoutMs, `organism-${this.options.consumer}`),
      (message) => this.options.logger.warn(`redis bus connection lost: ${message}`),
    );
    this.#reaper = new Reaper(this);
    const batchOf = (partition: number, defer?: () => void): CommandBatch =>
      new CommandBatch(this.#connection.client, {
        channel: this.keys.events,
        origin: this.options.consumer,
        group: this.options.group,
        consumer: this.options.consumer,
        formatVersion: FORMAT_VERSION,
        partition,
        defer,
        onError: (error) => {
          const text = scrubUrl(error.message, this.options.url);
          if (text === this.#lastBatchError) return;
          this.#lastBatchError = text;
          this.options.logger.error(`redis bus batch failed: ${text}`);
        },
      });
    // One partition: the one batch itself, no routing on the hot path.
    this.batch =
      this.options.partitions === 1
        ? batchOf(0)
        : new PartitionedBatch(
            this.keys.prefixes.map((prefix) =>
              prefix.slice(prefix.indexOf('{') + 1, prefix.lastIndexOf('}')),
            ),
            batchOf,
          );
    this.#heartbeat = new Heartbeat(this.#connection.client, this.batch, this.options, this.stats);
  }

  /** The shared command connection (thread store, effect log and tests reuse it). */
  get client(): Redis {
    return this.#connection.client;
  }

  get consumer(): string {
    return this.options.consumer;
  }

  publish(message: Message): Promise<void> {
    if (this.#closing) {
      return Promise.reject(new TransportError('transport.closed', 'the redis transport is closed'));
    }
    const inboxes = this.#inbox(message.to);
    const stream = inboxes.length === 1 ? inboxes[0]! : inboxes[this.keys.partitionOf(message.thread)]!;
    return this.batch.xadd(stream, encodeRecord(message)).then(this.#published, this.#publishFailed);
  }

  // One pair of functions for every publish (this runs once per message).
  readonly #published = (): void => {
    this.stats.published++;
  };

  readonly #publishFailed = (error: unknown): never => {
    throw this.#backendError('publish', error);
  };

  /** A listener's stream keys by partition, made once (the same strings each time: a cheap key-table lookup). */
  #inbox(listener: string): string[] {
    let keys = this.#inboxes.get(listener);
    if (keys === undefined) {
      keys = this.keys.prefixes.map((_, p) => this.keys.inbox(listener, p));
      if (this.#inboxes.size < 10_000) this.#inboxes.set(listener, keys);
    }
    return keys;
  }

  subscribe(listener: string, deliver: Deliver, options: SubscribeOptions = {}): Subscription {
    if (this.#closing) throw new TransportError('transport.closed', 'the redis transport is closed');
    if (this.#readers.has(listener)) {
      throw new TransportError('transport.duplicate_subscriber', `${listener} already has a subscriber`);
    }
    const max = options.maxInFlight ?? this.options.defaultMaxInFlight;
    if (!Number.isInteger(max) || max < 1) {
      throw new TransportError(
        'transport.invalid_option',
        'maxInFlight must be a whole number of at least 1',
      );
    }
    const streams = this.#inbox(listener);
    for (const stream of streams) {
      if (options.readsHistory === false) this.#noHistory.add(stream);
      else this.#noHistory.delete(stream);
    }
    let subscribed: Subscribed;
    if (streams.length === 1) {
      const reader = new StreamReader(this, listener, streams[0]!, deliver, max);
      subscribed = { readers: () => [reader], stop: (deadline) => reader.stop(deadline) };
    } else {
      // A reader per partition held (leases.ts), sharing the listener's maxInFlight slots.
      const slots = new SlotPool(max);
      const leases = new ListenerLeases(this, listener, (p) => {
        let go: () => void = () => {};
        const ready = new Promise<void>((resolve) => {
          go = resolve;
        });
        const reader = new StreamReader(this, listener, streams[p]!, deliver, max, p, slots, ready);
        void this.#takeOver(reader).finally(go);
        return reader;
      });
      subscribed = {
        readers: () => leases.readers(),
        stop: (deadline) => leases.close(deadline ?? Date.now() + this.options.closeTimeoutMs),
        leases,
      };
      void leases.tick();
    }
    this.#readers.set(listener, subscribed);
    if (this.#timers.length === 0) this.#startTimers();
    return {
      unsubscribe: async () => {
        await subscribed.stop();
        if (this.#readers.get(listener) === subscribed) this.#readers.delete(listener);
      },
    };
  }

  /**
   * Flushes what is queued, lets deliveries in flight finish and closes the connections, all
   * within closeTimeoutMs, whatever Redis does: with Redis away nothing is waited for, and a slow
   * or frozen Redis is given up on at the deadline. What is not acknowledged by then stays
   * pending and goes to another daemon once this one's heartbeat has stopped.
   */
  async close(): Promise<void> {
    this.#closing ??= (async () => {
      const deadline = Date.now() + this.options.closeTimeoutMs;
      const left = () => deadline - Date.now();
      for (const timer of this.#timers) clearInterval(timer);
      const { client } = this.#connection;
      // Publishes already accepted go out and are answered (unless Redis is away or too slow).
      if (!this.#connection.down) await within(this.batch.drain(), left());
      await Promise.all([...this.#readers.values()].map((s) => s.stop(deadline)));
      this.#readers.clear();
      if (client.status === 'ready') {
        // The last thread-state writes and acks, then the connection.
        await within(this.batch.drain(), left());
        await within(client.quit(), left());
      }
      // Rejects what still waits for Redis, and stops reconnecting.
      client.disconnect();
    })();
    return this.#closing;
  }

  // ---- dead letters (API and metrics) ----------------------------------------------------------

  /** The newest dead-lettered entries of this organism, newest first; `before`: older than that entry id. */
  deadLetters(count = 100, before?: string): Promise<DeadLetter[]> {
    return readDeadLetters(this.client, this.keys, count, before);
  }

  /** How many entries were ever dead-lettered in this organism (all daemons). */
  deadLetterCount(): Promise<number> {
    return deadLetterCount(this.client, this.keys);
  }

  /** The partitions of `listener` whose lease this daemon holds (all of them with one partition). */
  leasedPartitions(listener: string): number[] {
    const subscribed = this.#readers.get(listener);
    if (!subscribed) return [];
    return subscribed.leases ? subscribed.leases.held() : [0];
  }

  /** A reader that took a partition over claims what the last holder left, before it reads. */
  async #takeOver(reader: StreamReader): Promise<void> {
    try {
      await this.ensureGroup(this.client, reader.stream);
      await this.#reaper.reapStream(reader);
    } catch (error) {
      // The reaper's regular pass claims them instead.
      this.options.logger.warn(
        { listener: reader.listener, partition: reader.partition },
        `taking over a partition's pending entries failed: ${scrubUrl((error as Error).message, this.options.url)}`,
      );
    }
  }

  #allReaders(): StreamReader[] {
    const all: StreamReader[] = [];
    for (const subscribed of this.#readers.values()) for (const r of subscribed.readers()) all.push(r);
    return all;
  }

  // ---- ReaderHost ------------------------------------------------------------------------------

  async ensureGroup(client: CommandRunner, stream: string): Promise<void> {
    try {
      // From 0, not $: entries published before any daemon subscribed are delivered too.
      await client.call('XGROUP', 'CREATE', stream, this.options.group, '0', 'MKSTREAM');
    } catch (error) {
      if (!/BUSYGROUP/.test((error as Error).message)) throw error;
    }
  }

  readNow(stream: string, count: number | (() => number), plain = false): Promise<ReadEntry[]> {
    return this.batch.read(stream, count, plain, !this.#noHistory.has(stream));
  }

  preloaded(message: Message | undefined, load: LoadReply): void {
    if (message) this.#threads?.preload(message.thread, message.frame, load);
    else this.#threads?.preload('', '', null);
  }

  /** Reads then bring each entry's thread state along, or the changes of its partition. */
  useThreadStore(threads: ReadThreads): void {
    this.#threads = threads;
  }

  trusting(partition: number, changes: ChangesReply | undefined): number {
    return this.#threads?.trusting(partition, changes) ?? 1;
  }

  changesFrom(partition: number): ChangesFrom | undefined {
    return this.#threads?.changesFrom(partition);
  }

  ack(stream: string, id: string): Promise<void> {
    return this.batch.xack(stream, id).then(this.#acked);
  }

  // One function for every ack (this runs once per message).
  readonly #acked = (): void => {
    this.stats.acked++;
  };

  recordFailure(id: string, reason: string, partition = 0): void {
    // Redacted: it becomes the dead letter's reason (GET /dead-letters), and a decode error quotes
    // the entry's text.
    const text = redactString(reason).slice(0, 2_000);
    this.client.set(this.keys.failure(id, partition), text, 'EX', FAILURE_TTL_S).catch(() => {});
  }

  // ---- heartbeat and reaper --------------------------------------------------------------------

  #startTimers(): void {
    const heartbeat = setInterval(() => {
      void this.#heartbeat.beat(this.#allReaders());
      for (const subscribed of this.#readers.values()) void subscribed.leases?.tick();
    }, this.options.heartbeatMs);
    const reaper = setInterval(() => void this.reap(), this.options.reaperIntervalMs);
    heartbeat.unref();
    reaper.unref();
    this.#timers.push(heartbeat, reaper);
  }

  /**
   * One reaper pass over every subscribed stream; streams are trimmed too when the last trim is
   * TRIM_EVERY_MS old, or at once with `trimNow`. Public so tests can run one at a chosen moment.
   */
  async reap(options: { trimNow?: boolean } = {}): Promise<void> {
    if (this.#reaping || this.#closing || this.client.status !== 'ready') return;
    this.#reaping = true;
    try {
      const trim = options.trimNow === true || Date.now() - this.#lastTrim >= TRIM_EVERY_MS;
      if (trim) this.#lastTrim = Date.now();
      for (const reader of this.#allReaders()) {
        if (reader.stopping) continue;
        await this.#reaper.reapStream(reader);
        if (trim) await this.#reaper.trim(reader.stream);
      }
    } catch (error) {
      this.options.logger.warn(
        `redis reaper pass failed: ${scrubUrl((error as Error).message, this.options.url)}`,
      );
    } finally {
      this.#reaping = false;
    }
  }

  /** Tells the owner (the shared thread store) that a message will never be handled. */
  notifyDeadLetter(body: string): void {
    if (!this.onDeadLetter || !body) return;
    let message: Message;
    try {
      message = decodeRecord(body);
    } catch {
      return;
    }
    try {
      this.onDeadLetter(message);
    } catch (error) {
      this.options.logger.warn(`dead-letter observer failed: ${(error as Error).message}`);
    }
  }

  #backendError(what: string, error: unknown): TransportError {
    const text = scrubUrl((error as Error)?.message ?? String(error), this.options.url);
    return new TransportError(
      'transport.backend',
      `redis at ${this.#connection.address} failed to ${what}: ${text}`,
      { address: this.#connection.address },
      { cause: error },
    );
  }
}
