/**
 * Options of the Redis Streams transport, with every default in one place (defaultRedisBusOptions)
 * and checked once at construction, and the key layout every Redis-backed part of the bus shares.
 *
 * Keys: `organism:{<group>}:in:<listener>` is a listener's stream, `organism:{<group>}:dead` the
 * dead-letter stream, `organism:{<group>}:thread:<id>` and friends the shared thread state. The
 * braces are a Redis Cluster hash tag: every key of one organism lives in one slot, so the Lua
 * scripts that touch several of them stay legal on a cluster.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { schemaDefault } from '../../../config/schema.ts';
import { TransportError } from '../../../errors.ts';
import { checkKeyName, organismKeyPrefix } from '../../../redis-keys.ts';
import { isClusterUrl, parseClusterUrl } from '../../../redis-url.ts';
import { partitionOf, partitionTags } from './partitions.ts';

/** The most partitions `bus.partitions` may ask for (each costs every daemon a reader per listener). */
export const MAX_PARTITIONS = 256;

export interface RedisBusOptions {
  /**
   * redis:// or rediss:// URL (may carry user, password and database number), or a Redis Cluster's
   * seed nodes: redis+cluster://[user:password@]host:port,host:port (redis-url.ts).
   */
  url: string;
  /** Consumer group shared by every daemon of the organism (organism.yaml `bus.group`). */
  group: string;
  /**
   * Parts each listener's stream and the thread state are split in (organism.yaml
   * `bus.partitions`, see partitions.ts). Default 1: one hash tag, today's key layout.
   */
  partitions?: number;
  /** This daemon's consumer name. Default `<hostname>-<pid>-<random>`. */
  consumer?: string;
  /** XREADGROUP BLOCK, ms: how long one blocking read waits before it looks around again. */
  blockMs?: number;
  /** An entry delivered this many times without an ack goes to the dead-letter stream. */
  maxDeliveries?: number;
  /**
   * How often a daemon marks the entries it holds as alive, ms (organism.yaml `bus.heartbeat_ms`).
   * Default 1000. It sets the failover time: see claimIdleMs.
   */
  heartbeatMs?: number;
  /**
   * An entry unacknowledged and unmarked this long (ms) belongs to a consumer presumed dead and is
   * claimed. A live daemon marks its entries every heartbeatMs, however long their handlers run,
   * so this only has to outlast a few missed heartbeats (a stall), never a handler. Default
   * heartbeatMs x (MISSED_HEARTBEATS + 1): 4 s with the default heartbeat.
   */
  claimIdleMs?: number;
  /** How often the reaper looks for idle entries and trims acknowledged ones, ms. Default heartbeatMs. */
  reaperIntervalMs?: number;
  /** Messages read ahead per listener when subscribe() does not say. */
  defaultMaxInFlight?: number;
  /** Dead-letter entries kept (oldest dropped first). */
  deadLetterMaxLength?: number;
  /** How long one connection attempt may take, ms. */
  connectTimeoutMs?: number;
  /** close(): how long in-flight deliveries may take to settle before connections are dropped, ms. */
  closeTimeoutMs?: number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export type ResolvedRedisBusOptions = Required<Omit<RedisBusOptions, 'logger'>> & {
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
};

const SILENT = { info() {}, warn() {}, error() {} } as unknown as Pick<Logger, 'info' | 'warn' | 'error'>;

export function defaultConsumerName(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** How often a daemon marks its in-flight entries alive by default, ms (`bus.heartbeat_ms`). */
export const DEFAULT_HEARTBEAT_MS = schemaDefault<number>('bus.heartbeat_ms');
/**
 * Heartbeats an entry's owner may miss before the entry is claimed: the claim comes one heartbeat
 * after the third missed one. After a `kill -9` another daemon starts the dead one's entries within
 * (MISSED_HEARTBEATS + 2) heartbeats (claimable, then the next reaper pass): 5 s by default.
 */
export const MISSED_HEARTBEATS = 3;

/** How long one connection attempt may take by default, ms (every bus connection). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;

export function defaultRedisBusOptions(options: RedisBusOptions): ResolvedRedisBusOptions {
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const resolved: ResolvedRedisBusOptions = {
    consumer: defaultConsumerName(),
    partitions: schemaDefault<number>('bus.partitions'),
    blockMs: 1_000,
    maxDeliveries: schemaDefault<number>('bus.max_deliveries'),
    heartbeatMs,
    claimIdleMs: heartbeatMs * (MISSED_HEARTBEATS + 1),
    reaperIntervalMs: heartbeatMs,
    defaultMaxInFlight: 32,
    deadLetterMaxLength: 10_000,
    connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
    closeTimeoutMs: 5_000,
    ...stripUndefined(options),
    url: options.url,
    group: options.group,
    logger: options.logger ?? SILENT,
  };
  if (!/^rediss?(\+cluster)?:\/\//.test(resolved.url)) {
    throw new TransportError(
      'transport.invalid_option',
      "bus.url must start with redis:// or rediss:// (redis+cluster:// or rediss+cluster:// for a cluster's seed nodes)",
    );
  }
  if (isClusterUrl(resolved.url)) parseClusterUrl(resolved.url);
  checkKeyName('bus.group', resolved.group);
  checkKeyName('consumer', resolved.consumer);
  if (
    !Number.isInteger(resolved.partitions) ||
    resolved.partitions < 1 ||
    resolved.partitions > MAX_PARTITIONS
  ) {
    throw new TransportError(
      'transport.invalid_option',
      `bus.partitions must be a whole number from 1 to ${MAX_PARTITIONS}`,
      { partitions: resolved.partitions },
    );
  }
  for (const key of [
    'blockMs',
    'maxDeliveries',
    'claimIdleMs',
    'reaperIntervalMs',
    'heartbeatMs',
    'defaultMaxInFlight',
    'deadLetterMaxLength',
    'connectTimeoutMs',
  ] as const) {
    const value = resolved[key];
    if (!Number.isInteger(value) || value < 1) {
      throw new TransportError('transport.invalid_option', `${key} must be a whole number of at least 1`, {
        [key]: value,
      });
    }
  }
  if (resolved.claimIdleMs <= resolved.heartbeatMs) {
    // Entries would look idle between two heartbeats: live work taken over all the time.
    throw new TransportError('transport.invalid_option', 'claimIdleMs must be more than heartbeatMs', {
      claimIdleMs: resolved.claimIdleMs,
      heartbeatMs: resolved.heartbeatMs,
    });
  }
  if (!Number.isInteger(resolved.closeTimeoutMs) || resolved.closeTimeoutMs < 0) {
    throw new TransportError(
      'transport.invalid_option',
      'closeTimeoutMs must be a whole number of at least 0',
    );
  }
  return resolved;
}

/**
 * Every Redis key of one organism (one consumer group). With partitions (partitions.ts) a
 * listener's stream, dead letters and following mark exist once per partition, and a thread's keys
 * live in its thread's partition; with one partition every key is under `organism:{<group>}:`.
 */
export class BusKeys {
  /** The organism's own prefix (partition 0's with one partition): keys of no thread. */
  readonly prefix: string;
  /** Each partition's key prefix, `organism:{<tag>}:`. */
  readonly prefixes: readonly string[];

  constructor(
    readonly group: string,
    readonly partitions = 1,
  ) {
    this.prefix = organismKeyPrefix(group);
    this.prefixes = partitionTags(group, partitions).map((tag) => `organism:{${tag}}:`);
  }

  /** The partition a thread's messages and state go to. */
  partitionOf(thread: string): number {
    return partitionOf(thread, this.partitions);
  }

  /** A listener's input stream (in partition `partition`). */
  inbox(listener: string, partition = 0): string {
    return `${this.prefixes[partition]}in:${listener}`;
  }

  /** Dead-letter stream (entries delivered too often without an ack) of partition 0. */
  get dead(): string {
    return this.deadOf(0);
  }

  deadOf(partition: number): string {
    return `${this.prefixes[partition]}dead`;
  }

  /** Total entries ever dead-lettered (the stream itself is capped), of partition 0. */
  get deadCount(): string {
    return this.deadCountOf(0);
  }

  deadCountOf(partition: number): string {
    return `${this.prefixes[partition]}dead:count`;
  }

  /** The last reason an entry's delivery failed, for its dead-letter record. */
  failure(entryId: string, partition = 0): string {
    return `${this.prefixes[partition]}fail:${entryId}`;
  }

  thread(id: string): string {
    return `${this.prefixes[this.partitionOf(id)]}thread:${id}`;
  }

  /** Key of thread `<id>` of partition `partition` is this plus the id. */
  threadPrefix(partition: number): string {
    return `${this.prefixes[partition]}thread:`;
  }

  frame(id: string): string {
    return `${this.prefix}frame:${id}`;
  }

  children(frameId: string): string {
    return `${this.prefix}kids:${frameId}`;
  }

  history(thread: string): string {
    return `${this.prefixes[this.partitionOf(thread)]}history:${thread}`;
  }

  /** Key of thread `<id>`'s history list in partition `partition` is this plus the id. */
  historyPrefix(partition: number): string {
    return `${this.prefixes[partition]}history:`;
  }

  /**
   * The partition's changes list: every frame record deleted and every thread stopped there, which
   * every reader reads behind its entries (lua/batch.lua: change; thread-store.ts); and with
   * `:trimmed` after it, how many were cut off its front.
   */
  changes(partition: number): string {
    return `${this.prefixes[partition]}changes`;
  }

  /** Exists while some daemon follows some thread live (see RedisThreadStore.watch), partition 0. */
  get following(): string {
    return this.followingOf(0);
  }

  followingOf(partition: number): string {
    return `${this.prefixes[partition]}following`;
  }

  /**
   * Pub/sub channel: history entries and idle notices, for other daemons' watchers. A channel is
   * no key: on a cluster every node relays it, whichever partition's script publishes.
   */
  get events(): string {
    return `${this.prefix}events`;
  }

  /** Who reads partition `partition` of a listener's stream (leases.ts): the holder's name, with a TTL. */
  lease(listener: string, partition: number): string {
    return `${this.prefixes[partition]}lease:${listener}`;
  }

  /** The daemons reading a listener (leases.ts): a sorted set of consumer names by last heartbeat. */
  members(listener: string): string {
    return `${this.prefix}members:${listener}`;
  }

  /** Once-only effects: the first result of a side-effecting tool call. */
  effect(callId: string): string {
    return `${this.prefix}effect:${callId}`;
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
