/**
 * A master of the Redis Cluster killed with kill -9 mid-run (test/helpers/redis-cluster.ts): its
 * replica takes over its slots, publishes and reads wait out the failover, and every message whose
 * publish was accepted is delivered. Replication is asynchronous, so a write the master accepted
 * in its last instant before the kill could in principle miss the replica; this run measures it.
 * And a rebalance: a third reader joins a running group and one of the first two leaves.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { until } from '../../src/testing/index.ts';
import { redisClusterPerFile } from '../helpers/redis-cluster-per-file.ts';
import { openTransport } from './redis-harness.ts';
import { testMessage } from './transport.contract.ts';

const cluster = redisClusterPerFile();

it('loses no accepted message when a master is killed mid-run and its replica takes over', async () => {
  const group = `failover-${randomUUID().slice(0, 8)}`;
  const t = openTransport({ url: cluster().url, partitions: 6 }, group, 'c', 50, 10_000);
  const delivered = new Map<string, number>();
  const acceptedIds: string[] = [];
  try {
    t.subscribe('w', async (m) => {
      delivered.set(m.id, (delivered.get(m.id) ?? 0) + 1);
    });
    const masters = await cluster().masters();
    const victim = cluster().nodes.find((n) => n.port === masters[0]!.port)!;
    let killedAt = 0;
    const total = 400;
    for (let i = 0; i < total; i++) {
      const m = testMessage('w', i, { thread: `thread-${i % 60}` });
      await t.publish(m);
      acceptedIds.push(m.id);
      if (i === 150) {
        victim.kill();
        killedAt = Date.now();
      }
    }
    const publishedInMs = Date.now() - killedAt;
    await until(() => acceptedIds.every((id) => delivered.has(id)), {
      what: 'every accepted message delivered',
      timeoutMs: 30_000,
    });
    const after = await cluster().masters();
    expect(after.map((m) => m.port)).not.toContain(victim.port);
    const repeated = [...delivered.values()].filter((n) => n > 1).length;
    console.log(
      `master failover: ${acceptedIds.length} accepted, all delivered; ${repeated} delivered twice; publishes after the kill took ${publishedInMs} ms`,
    );
    expect(acceptedIds.filter((id) => !delivered.has(id))).toEqual([]);
  } finally {
    await t.close();
  }
}, 60_000);

it('loses and repeats no message while a third daemon joins and one of the first two leaves', async () => {
  const group = `rebalance-${randomUUID().slice(0, 8)}`;
  const delivered = new Map<string, number>();
  const by = new Map<string, number>();
  const open = (name: string) => {
    const t = openTransport({ url: cluster().url, partitions: 6 }, group, name, 50, 10_000);
    t.subscribe('w', async (m) => {
      delivered.set(m.id, (delivered.get(m.id) ?? 0) + 1);
      by.set(name, (by.get(name) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 2));
    });
    return t;
  };
  const a = open('a');
  const b = open('b');
  let c: ReturnType<typeof open> | undefined;
  const ids: string[] = [];
  try {
    for (let i = 0; i < 300; i++) {
      const m = testMessage('w', i, { thread: `thread-${i % 50}` });
      await a.publish(m);
      ids.push(m.id);
      if (i === 100) c = open('c');
      if (i === 200) await b.close(); // leaves: what it holds is finished and acknowledged first
    }
    await until(() => ids.every((id) => delivered.has(id)), {
      what: 'every message delivered',
      timeoutMs: 30_000,
    });
    await new Promise((r) => setTimeout(r, 1_000)); // a repeat would arrive by now (claim time 300 ms)
    expect(ids.filter((id) => !delivered.has(id))).toEqual([]);
    expect([...delivered.entries()].filter(([, n]) => n > 1)).toEqual([]);
    // The newcomer took a share of the work.
    expect(by.get('c') ?? 0).toBeGreaterThan(0);
  } finally {
    await Promise.all([a.close(), b.close(), c?.close()]);
  }
}, 60_000);
