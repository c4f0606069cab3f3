/**
 * bus.partitions and Redis Cluster: the shared Transport contract on one Redis with 4 partitions
 * and on a local cluster of 3 masters and 3 replicas with 6 (test/helpers/redis-cluster.ts), and
 * where the keys go: a thread's stream entries and state share one slot, and 6 partitions put
 * two on each master.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BusKeys } from '../../src/bus/transport/redis/index.ts';
import { keySlot, partitionOf, partitionTags } from '../../src/bus/transport/redis/partitions.ts';
import { loadedScript } from '../../src/bus/transport/redis/script-call.ts';
import { BATCH_SCRIPT, BATCH_SCRIPT_CROSS_SLOT } from '../../src/bus/transport/redis/scripts.ts';
import { createRedisClient } from '../../src/redis-client.ts';
import { until } from '../../src/testing/index.ts';
import { type LocalRedisCluster, startRedisCluster } from '../helpers/redis-cluster.ts';
import { openTransport, type RedisHarnessOptions, redisHarness } from './redis-harness.ts';
import { testMessage, transportContract } from './transport.contract.ts';

const URL = 'redis://127.0.0.1:6379';
const RUN = `organism-test-${randomUUID().slice(0, 8)}`;
const raw = new Redis(URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
let cluster: LocalRedisCluster;
/** Filled in once the cluster is up: the harness reads it when a test runs. */
const onCluster = { url: '', run: `${RUN}-cluster`, partitions: 6 } as RedisHarnessOptions;

beforeAll(async () => {
  cluster = await startRedisCluster();
  onCluster.url = cluster.url;
  onCluster.raw = createRedisClient(cluster.url, { maxRetriesPerRequest: 1 });
}, 30_000);

afterAll(async () => {
  let cursor = '0';
  do {
    const [next, keys] = await raw.scan(cursor, 'MATCH', `organism:{${RUN}-*`, 'COUNT', 1000);
    if (keys.length > 0) await raw.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await raw.quit();
  onCluster.raw?.disconnect();
  await cluster?.stop();
});

transportContract(
  'redis',
  redisHarness({ url: URL, run: `${RUN}-p4`, partitions: 4, raw }),
  'redis, 4 partitions',
);
transportContract('redis', redisHarness(onCluster), 'redis cluster, 6 partitions');

describe('partitions', () => {
  it('gives each of N partitions a tag in the N-th of the slot space, as the cluster hashes it', async () => {
    const tags = partitionTags('an-organism', 6);
    expect(new Set(tags).size).toBe(6);
    tags.forEach((tag, p) => {
      const slot = keySlot(`organism:{${tag}}:in:x`);
      expect(slot).toBeGreaterThanOrEqual(Math.floor((p * 16_384) / 6));
      expect(slot).toBeLessThan(Math.floor(((p + 1) * 16_384) / 6));
    });
    const node = cluster.nodeClient(cluster.nodes[0]!.port);
    try {
      for (const key of [
        ...tags.map((t) => `organism:{${t}}:thread:x`),
        'plain',
        'a{}b',
        '{user1000}.following',
      ]) {
        expect(keySlot(key)).toBe(Number(await node.call('CLUSTER', 'KEYSLOT', key)));
      }
    } finally {
      node.disconnect();
    }
    // One partition: today's single tag, the group itself.
    expect(partitionTags('an-organism', 1)).toEqual(['an-organism']);
    expect(new BusKeys('g').inbox('worker')).toBe('organism:{g}:in:worker');
  });

  it("keeps a thread's stream entries, thread state and history in one slot, spread evenly over the masters", async () => {
    const group = `${RUN}-spread`;
    const t = openTransport({ url: cluster.url, partitions: 6 }, group, 'c');
    try {
      const threads = Array.from({ length: 600 }, (_, i) => `thread-${i}-${randomUUID()}`);
      await Promise.all(threads.map((thread, i) => t.publish(testMessage('w', i, { thread }))));
      for (const thread of threads.slice(0, 20)) {
        const slot = keySlot(t.keys.inbox('w', t.keys.partitionOf(thread)));
        expect(keySlot(t.keys.thread(thread))).toBe(slot);
        expect(keySlot(t.keys.history(thread))).toBe(slot);
      }
      const masters = await cluster.masters();
      const perMaster = new Map<number, number>();
      const client = onCluster.raw;
      for (let p = 0; p < 6; p++) {
        const stream = t.keys.inbox('w', p);
        const slot = keySlot(stream);
        const master = masters.find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b))!;
        perMaster.set(master.port, (perMaster.get(master.port) ?? 0) + (await client.xlen(stream)));
      }
      const counts = [...perMaster.values()];
      expect(counts).toHaveLength(3);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(600);
      // FNV of random ids over 6 partitions: each master's share is near 200; 150 is far out.
      for (const n of counts) expect(n).toBeGreaterThan(150);
    } finally {
      await t.close();
    }
  });

  it('delivers every thread in order when its messages spread over the partitions', async () => {
    const group = `${RUN}-order`;
    const t = openTransport({ url: URL, partitions: 5 }, group, 'c');
    try {
      const got = new Map<string, number[]>();
      t.subscribe('a', async (m) => {
        const list = got.get(m.thread) ?? [];
        list.push(m.hop);
        got.set(m.thread, list);
      });
      const threads = ['t-a', 't-b', 't-c', 't-d', 't-e', 't-f', 't-g'];
      expect(new Set(threads.map((x) => partitionOf(x, 5))).size).toBeGreaterThan(2);
      for (let n = 0; n < 70; n++) await t.publish(testMessage('a', n, { thread: threads[n % 7]! }));
      await until(() => [...got.values()].reduce((a, l) => a + l.length, 0) === 70, 'all deliveries');
      for (const [i, thread] of threads.entries()) {
        expect(got.get(thread)).toEqual(Array.from({ length: 10 }, (_, k) => i + 7 * k));
      }
    } finally {
      await t.close();
    }
  });

  /** Threads enough that every one of `n` partitions carries some, `per` each at least. */
  function threadsOver(n: number, per = 2): string[] {
    const threads: string[] = [];
    const count = new Array<number>(n).fill(0);
    for (let i = 0; count.some((c) => c < per); i++) {
      const thread = `spread-${i}`;
      threads.push(thread);
      count[partitionOf(thread, n)]!++;
    }
    return threads;
  }

  /** Script calls (EVAL, EVALSHA) each master has run so far (INFO commandstats). */
  async function scriptCalls(): Promise<Map<number, number>> {
    const calls = new Map<number, number>();
    for (const m of await cluster.masters()) {
      const node = cluster.nodeClient(m.port);
      try {
        const stats = await node.info('commandstats');
        const of = (command: string) =>
          Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
        calls.set(m.port, of('eval') + of('evalsha'));
      } finally {
        node.disconnect();
      }
    }
    return calls;
  }

  it('sends one script call per master per turn on a cluster, not one per partition', async () => {
    const group = `${RUN}-merged`;
    const t = openTransport({ url: cluster.url, partitions: 6 }, group, 'c');
    try {
      const threads = threadsOver(6);
      // A first turn loads the script on every master and the client's slot map.
      await Promise.all(threads.map((thread, i) => t.publish(testMessage('w', i, { thread }))));
      const before = await scriptCalls();
      await Promise.all(threads.map((thread, i) => t.publish(testMessage('w', i, { thread }))));
      const after = await scriptCalls();
      const perMaster = [...after].map(([port, n]) => n - before.get(port)!);
      // Two partitions on each master: one call each, where one per partition made two.
      expect(perMaster).toEqual([1, 1, 1]);
      let total = 0;
      for (let p = 0; p < 6; p++) total += await onCluster.raw.xlen(t.keys.inbox('w', p));
      expect(total).toBe(threads.length * 2);
    } finally {
      await t.close();
    }
  });

  it('sends one script call for all partitions on one Redis', async () => {
    const group = `${RUN}-merged-one`;
    const t = openTransport({ url: URL, partitions: 4 }, group, 'c');
    const client = t.client as unknown as { sendCommand(command: { args: unknown[] }): unknown };
    const batchScripts = new Set([BATCH_SCRIPT, BATCH_SCRIPT_CROSS_SLOT].map((lua) => loadedScript(lua).sha));
    // A set: a command sent before the connection is ready comes through here again when it is.
    const calls = new Set<object>();
    const sendCommand = client.sendCommand;
    client.sendCommand = (command) => {
      if (batchScripts.has(command.args[0] as string)) calls.add(command);
      return sendCommand.call(t.client, command);
    };
    try {
      const threads = threadsOver(4);
      await Promise.all(threads.map((thread, i) => t.publish(testMessage('w', i, { thread }))));
      expect(calls.size).toBe(1);
      let total = 0;
      for (let p = 0; p < 4; p++) total += await raw.xlen(t.keys.inbox('w', p));
      expect(total).toBe(threads.length);
    } finally {
      await t.close();
    }
  });

  it("falls back to a call per partition, losing and repeating nothing, when the client's slot map is stale", async () => {
    const group = `${RUN}-stale`;
    const t = openTransport({ url: cluster.url, partitions: 6 }, group, 'c');
    const client = t.client as unknown as { slots: string[][]; refreshSlotsCache(): void };
    try {
      const threads = threadsOver(6);
      await Promise.all(threads.map((thread, i) => t.publish(testMessage('w', i, { thread }))));
      // The map says partition 2's slot is on partition 0's master: the merged call that goes
      // there finds partition 2's keys elsewhere before it writes anything.
      const slot0 = keySlot(t.keys.inbox('w', 0));
      const slot1 = keySlot(t.keys.inbox('w', 2));
      const truth = client.slots[slot1]!.slice();
      expect(client.slots[slot0]![0]).not.toBe(truth[0]);
      client.slots[slot1] = client.slots[slot0]!.slice();
      client.refreshSlotsCache = () => {}; // keep the lie for this turn; the map refreshes on its own later
      const before = await scriptCalls();
      await Promise.all(threads.map((thread, i) => t.publish(testMessage('w', i, { thread }))));
      const after = await scriptCalls();
      const calls = [...after].reduce((sum, [port, n]) => sum + n - before.get(port)!, 0);
      // 3 merged calls (one answered 'moved'), then that call's 3 partitions each alone.
      expect(calls).toBeGreaterThan(3);
      for (let p = 0; p < 6; p++) {
        const ids = (await onCluster.raw.xrange(t.keys.inbox('w', p), '-', '+')).map(([, f]) => f[3]!);
        const want = threads.filter((thread) => partitionOf(thread, 6) === p).length * 2;
        expect(ids).toHaveLength(want);
        expect(new Set(ids).size).toBe(want);
      }
    } finally {
      await t.close();
    }
  });
});
