/**
 * Picks the bus backend from organism.yaml: the in-memory transport for one daemon (default), or,
 * with `bus.transport: redis`, the Redis Streams transport plus the shared thread store, so several
 * daemons started on the same organism.yaml and Redis share its work and its threads.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { OrganismConfig } from '../../config/types.ts';
import { TransportError } from '../../errors.ts';
import { MemoryTransport } from '../memory-transport.ts';
import type { ThreadStore } from '../thread-store.ts';
import type { Transport } from '../transport.ts';
import { registerRedisBusMetrics } from './metrics.ts';
import { RedisThreadStore } from './thread-store.ts';
import { RedisTransport } from './transport.ts';

export interface BusBackend {
  transport: Transport;
  /** Present with the redis transport: what the Bus takes as `threadStore`. */
  threadStore?: ThreadStore;
  /** Present with the redis transport: dead letters and counters for the API and metrics. */
  redis?: RedisTransport;
  /** Releases what the bus does not close itself (call after Bus.stop()). */
  close(): Promise<void>;
}

export interface BusBackendOptions {
  /** Prometheus registry for the redis bus gauges (dead letters, claims, acks). */
  metrics?: Registry;
  /**
   * How long closing the redis transport may take after the drain, ms (RedisBusOptions'
   * closeTimeoutMs): the daemon keeps its whole shutdown within drain_timeout_ms + 2 s.
   */
  closeTimeoutMs?: number;
}

export function createBusBackend(
  config: Pick<OrganismConfig, 'bus' | 'limits' | 'listeners'>,
  logger: Logger,
  options: BusBackendOptions = {},
): BusBackend {
  const { bus, limits } = config;
  if (bus.transport !== 'redis') return { transport: new MemoryTransport(), close: async () => {} };
  if (!bus.url)
    throw new TransportError('transport.invalid_option', 'bus.url is required when bus.transport is redis');
  const log = logger.child({ component: 'bus.redis' });
  const transport = new RedisTransport({
    url: bus.url,
    group: bus.group,
    maxDeliveries: bus.max_deliveries,
    // Entries are claimable a few missed heartbeats after their daemon stopped marking them, not
    // after the slowest handler's timeout: a live daemon marks what it holds however long it runs.
    heartbeatMs: bus.heartbeat_ms,
    closeTimeoutMs: options.closeTimeoutMs,
    logger: log,
  });
  const threadStore = new RedisThreadStore({
    client: transport.client,
    batch: transport.batch,
    url: bus.url,
    keys: transport.keys,
    origin: transport.consumer,
    idleMs: limits.thread_idle_ms,
    maxHistoryPerThread: limits.max_history_per_thread,
    connectTimeoutMs: transport.options.connectTimeoutMs,
    logger: log,
  });
  transport.onPreload = (thread, frame, load) => threadStore.preload(thread, frame, load);
  // A dead-lettered message will never settle: count it out of its thread, or it stays "active".
  transport.onDeadLetter = (message) => {
    threadStore.settled(message.thread).catch(() => {});
  };
  const unregister = options.metrics ? registerRedisBusMetrics(options.metrics, transport) : () => {};
  log.info({ consumer: transport.consumer, group: bus.group }, 'bus on redis streams');
  return {
    transport,
    threadStore,
    redis: transport,
    close: async () => {
      unregister();
      await threadStore.close();
    },
  };
}
