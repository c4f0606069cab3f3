/**
 * The local Redis Cluster the cluster tests and the bench start (test/helpers/redis-cluster.ts):
 * 3 masters with a third of the slots each, a replica each, and a master killed with kill -9 is
 * replaced by its replica.
 */
import { expect, it } from 'vitest';
import { redisClusterPerFile } from '../helpers/redis-cluster-per-file.ts';

const cluster = redisClusterPerFile();

it('starts 3 masters serving a third of the slots each, and a replica takes over a killed master', async () => {
  const masters = await cluster().masters();
  expect(masters).toHaveLength(3);
  const sizes = masters.map((m) => m.slots.reduce((n, [a, b]) => n + b - a + 1, 0));
  expect(sizes.reduce((a, b) => a + b, 0)).toBe(16_384);
  for (const size of sizes) expect(Math.abs(size - 16_384 / 3)).toBeLessThan(2);
  expect(cluster().url).toMatch(/^redis\+cluster:\/\/127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+){5}$/);

  const victim = masters[0]!;
  cluster()
    .nodes.find((n) => n.port === victim.port)!
    .kill();
  await cluster().waitOk(20_000);
  const after = await cluster().masters();
  expect(after.map((m) => m.port)).not.toContain(victim.port);
  expect(after).toHaveLength(3);
}, 40_000);
