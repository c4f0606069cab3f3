/**
 * Picks the bus transport from organism.yaml: the in-memory transport for one daemon (default), or,
 * with `bus.transport: redis`, the Redis Streams transport plus the shared thread store, so several
 * daemons started on the same organism.yaml and Redis share its work and its threads. The one place
 * the choice is made; each implementation builds only itself.
 *
 * The Redis transport (some twenty modules) is imported when it is chosen, not at start: a daemon on
 * the default memory transport never loads it (bench/daemon.ts measures start time and idle RSS).
 */
import type { Logger } from 'pino';
import type { OrganismConfig } from '../../config/types.ts';
import { LocalThreadStore } from '../thread-store.ts';
import type { BusBackend, BusBackendOptions } from './backend.ts';
import { MemoryTransport } from './memory.ts';

export type { BusBackend, BusBackendOptions } from './backend.ts';

export async function createBusBackend(
  config: Pick<OrganismConfig, 'bus' | 'limits' | 'listeners'>,
  logger: Logger,
  options: BusBackendOptions = {},
): Promise<BusBackend> {
  switch (config.bus.transport) {
    case 'redis': {
      const { createRedisBusBackend } = await import('./redis/backend.ts');
      return createRedisBusBackend(config, logger, options);
    }
    default:
      return { transport: new MemoryTransport(), threadStore: new LocalThreadStore(), close: async () => {} };
  }
}
