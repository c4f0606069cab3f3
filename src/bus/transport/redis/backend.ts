/**
 * The redis bus backend: the Redis Streams transport plus the shared thread store, wired together
 * (preload, dead letters) with their metrics. Chosen by ../factory.ts with `bus.transport: redis`.
 */
import type { Logger } from 'pino';
import type { OrganismConfig } from '../../../config/types.ts';
import { TransportError } from '../../../errors.ts';
import type { BusBackend, BusBackendOptions } from '../backend.ts';
import { registerRedisBusMetrics } from './metrics.ts';
import { RedisThreadStore } from './thread-store.ts';
import { RedisTransport } from './transport.ts';

/** The redis backend with its parts' own types (the factory hands it on as a BusBackend). */
export interface RedisBusBackend extends BusBackend {
  threadStore: RedisThreadStore;
  redis: RedisTransport;
}

export function createRedisBusBackend(
  config: Pick<OrganismConfig, 'bus' | 'limits' | 'listeners'>,
  logger: Logger,
  options: BusBackendOptions = {},
): RedisBusBackend {
  const { bus, limits } = config;
  if (!bus.url)
    throw new TransportError('transport.invalid_option', 'bus.url is required when bus.transport is redis');
  const log = logger.child({ component: 'bus.redis' });
  const transport = new RedisTransport({
    url: bus.url,
    group: bus.group,
    maxDeliveries: bus.max_deliveries,
    partitions: bus.partitions,
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
  transport.useThreadStore(threadStore);
  // A dead-lettered message will never settle: count it out of its thread, or it stays "active".
  transport.onDeadLetter = (message) => {
    threadStore.settled(message.thread).catch(() => {});
  };
  const unregister = options.metrics ? registerRedisBusMetrics(options.metrics, transport) : () => {};
  log.info(
    { consumer: transport.consumer, group: bus.group, partitions: transport.options.partitions },
    'bus on redis streams',
  );
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
