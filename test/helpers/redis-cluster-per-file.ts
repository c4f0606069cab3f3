/**
 * One local Redis Cluster (redis-cluster.ts) for a whole test file: started before its first test
 * (creating one takes about 2 s), stopped after its last. Kept apart from redis-cluster.ts, which
 * the bench imports outside vitest.
 */
import { afterAll, beforeAll } from 'vitest';
import { type LocalRedisCluster, startRedisCluster } from './redis-cluster.ts';

/** Registers the file's beforeAll/afterAll and returns the running cluster's getter. */
export function redisClusterPerFile(): () => LocalRedisCluster {
  let cluster: LocalRedisCluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 30_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error('the local redis cluster did not start (see beforeAll)');
    return cluster;
  };
}
