/**
 * Picks the kv backend from organism.yaml: Redis when `kv.url` is set, otherwise the embedded
 * store in `<organism.data_dir>/kv`. Tools (and the once-only effect log) share one store through
 * the tool runtime's resource cache under KV_RESOURCE_KEY, so the daemon opens it once and closes
 * it at shutdown.
 */
import { join } from 'node:path';
import type { OrganismConfig } from '../config/types.ts';
import type { ToolServices } from '../tools/types.ts';
import { redisAddress } from './address.ts';
import { openEmbeddedKvStore } from './embedded.ts';
import type { KvStore } from './types.ts';

export type { EmbeddedKvOptions } from './embedded.ts';
export { openEmbeddedKvStore } from './embedded.ts';
export type { RedisKvOptions } from './redis.ts';
export type { KvLimits, KvStore } from './types.ts';
export { KEY_MAX_CHARS, NAMESPACE_MAX_CHARS } from './types.ts';
// openRedisKvStore is imported from './redis.ts' itself: re-exported here, it would load the Redis
// client into every daemon, most of which never use it.
export { redisAddress };

/** Key of the shared store in ToolServices.resources. */
export const KV_RESOURCE_KEY = 'kv';

/** The parts of organism.yaml the kv store reads. */
export type KvConfig = Pick<OrganismConfig, 'organism'> & {
  kv?: { url?: string };
  bus?: { transport?: string; url?: string };
};

/**
 * The Redis URL of the store: `kv.url`, else `bus.url` when the bus runs on Redis (several daemons
 * must share one store, and it already has a Redis), else none (embedded).
 */
export function kvRedisUrl(config: KvConfig): string | undefined {
  return config.kv?.url ?? (config.bus?.transport === 'redis' ? config.bus.url : undefined);
}

/** Opens the configured store. The caller owns it and must close() it. */
export async function createKvStore(config: KvConfig): Promise<KvStore> {
  const url = kvRedisUrl(config);
  if (url) {
    const { openRedisKvStore } = await import('./redis.ts');
    return openRedisKvStore({ url });
  }
  return openEmbeddedKvStore({ dir: join(config.organism.data_dir, 'kv') });
}

/** The organism's one shared store, opened on first use and closed by the runtime at shutdown. */
export function sharedKvStore(services: ToolServices): Promise<KvStore> {
  return services.resources.get<KvStore>(
    KV_RESOURCE_KEY,
    () => createKvStore(services.config),
    (store) => store.close(),
  );
}

/** "redis 10.0.0.5:6379" or "embedded /var/lib/organism/kv": where the data lives, with no secret. */
export function describeKvBackend(config: KvConfig): string {
  const url = kvRedisUrl(config);
  if (url) return `redis ${redisAddress(url)}`;
  return `embedded ${join(config.organism.data_dir, 'kv')}`;
}
