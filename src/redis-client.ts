/**
 * One place that turns a Redis URL of organism.yaml into an ioredis client: a `Redis` for one
 * server, a `Cluster` for `redis+cluster://` seed nodes (see redis-url.ts). Callers keep their
 * `Redis` type: the commands the organism sends (single-key commands, scripts whose keys share one
 * hash tag, streams) are the same on both, and the cluster client routes each by its key's slot.
 * ioredis is loaded on first use.
 */
import type { ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { lazyRequire } from './lazy-require.ts';
import { isClusterUrl, parseClusterUrl } from './redis-url.ts';

const ioredis = lazyRequire<typeof import('ioredis')>('ioredis');

/**
 * How long a command may wait out a cluster failover (its master gone, a replica promoted): the
 * cluster client retries a command whose node connection closed every retryDelayOnFailover ms,
 * up to maxRedirections times, refreshing the slot map each time.
 */
const FAILOVER_RETRY_MS = 250;
const FAILOVER_RETRIES = 120;

/**
 * What the bus reads of a cluster client beyond the `Redis` type it is passed as (ioredis keeps
 * these public on its Cluster): each slot's nodes ("host:port", master first), the options its node
 * connections are made with, and a refresh of the slot map. On a one-server client all are absent.
 */
export interface ClusterView {
  isCluster?: boolean;
  slots?: string[][];
  options?: { redisOptions?: RedisOptions };
  refreshSlotsCache?(): void;
}

/** A client of one server given by its options (a cluster's node, say), not by a URL. */
export function createNodeClient(options: RedisOptions): Redis {
  return new (ioredis().Redis)(options);
}

export function createRedisClient(url: string, options: RedisOptions, where = 'bus.url'): Redis {
  const { Redis: Single, Cluster } = ioredis();
  if (!isClusterUrl(url)) return new Single(url, options);
  const target = parseClusterUrl(url, where);
  // A node connection never retries on its own in a cluster (the client re-reads the slot map
  // instead), so the caller's reconnect policy becomes the cluster's.
  const { retryStrategy, enableOfflineQueue, lazyConnect, enableAutoPipelining, connectTimeout, ...node } =
    options;
  const clusterOptions: ClusterOptions = {
    redisOptions: {
      ...node,
      connectTimeout,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls: {} } : {}),
    },
    enableOfflineQueue: enableOfflineQueue ?? true,
    lazyConnect: lazyConnect ?? false,
    enableAutoPipelining: enableAutoPipelining ?? false,
    clusterRetryStrategy: (times) =>
      retryStrategy ? (retryStrategy(times) ?? null) : Math.min(times * 100, 2_000),
    retryDelayOnFailover: FAILOVER_RETRY_MS,
    retryDelayOnClusterDown: FAILOVER_RETRY_MS,
    retryDelayOnTryAgain: 100,
    maxRedirections: FAILOVER_RETRIES,
    slotsRefreshTimeout: connectTimeout ?? 2_000,
    // Failover is noticed by MOVED and closed connections; this only catches a quiet change.
    slotsRefreshInterval: 5_000,
    scaleReads: 'master',
  };
  return new Cluster(target.nodes, clusterOptions) as unknown as Redis;
}
