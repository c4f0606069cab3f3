/**
 * Partitions on a Redis Cluster against one partition on one Redis, in the same run: two bench
 * daemons (bench/redis-daemon.ts, ping mode, the same load as bench/redis.ts) first on one Redis
 * with bus.partitions 1, then on a local cluster of 3 masters and 3 replicas
 * (test/helpers/redis-cluster.ts, started here) with bus.partitions 6, taking turns ROUNDS times
 * (medians).
 * - The one Redis is like one of the cluster's masters: a redis-server started here with the same
 *   settings (spawnRedisServer: every write fsynced to the append-only file) and one replica of
 *   its own. It was the shared redis-server at REDIS_URL, without persistence, replica or the
 *   quiet of a private server: measured apart, one Redis with the append-only file fsynced always
 *   spends 33-46 µs per message where the bare one spends 22-25, so the old ratio (masters 42
 *   against 23.8) charged the masters' persistence to the partitions. What is left in the ratio
 *   is what partitions cost: more script calls and reads per message, cluster mode's own work.
 * - cluster_master_share: the share of XADDs (INFO commandstats, scripts' calls included) each
 *   master served in the measured window; target each within 10 % of a third.
 * - daemon_cpu_us_per_msg (both daemons together, process.cpuUsage) and redis_cpu_us_per_msg
 *   (INFO cpu used_cpu_user + used_cpu_sys, before and after the window: of the one Redis, or of
 *   the cluster's three masters; per XADD the masters ran in that window), each way, and their
 *   ratio (target at most 1.1x). The replicas' CPU apart (`*_replica*`: the one Redis's replica,
 *   the cluster's three), and `redis_cpu_ratio_with_replicas` of masters and replicas together.
 * - msgs_per_s both ways. This machine has two cores shared by everything on it: the servers and
 *   two daemons compete for them, so the cluster cannot be faster here; the
 *   per-message CPU is what carries over to masters on separate machines.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../test/helpers/ports.ts';
import {
  type LocalRedisCluster,
  redisCpuMicros,
  startRedisCluster,
  stopServers,
} from '../test/helpers/redis-cluster.ts';
import { spawnRedisServer } from '../test/helpers/redis-server.ts';
import { median, round, sleep } from './support.ts';
import { REDIS_WARM_MS, twoBenchDaemons } from './support-redis.ts';

/**
 * Threads each bench daemon keeps looping, in both layouts. A thread's messages go to one
 * partition (FNV of its random id), so a master's share is a draw of the threads: with 64 they
 * were 0.30 / 0.39 / 0.31; with 1,200 the spread of a share is about 4 % of a third, so a share
 * more than 10 % off says something about the layout, not the draw.
 */
const THREADS_PER_DAEMON = 600;
const SECONDS = 3;
const ROUNDS = 3;
const PARTITIONS = 6;

interface Window {
  perSecond: number;
  daemonCpuUsPerMessage: number;
  redisCpuUsPerMessage: number;
  /** The replicas' CPU over the same XADDs. */
  replicaCpuUsPerMessage: number;
  /** XADDs per master (named by its slots) in the window. */
  xadds: Map<string, number>;
}

export async function* run(): AsyncIterable<Record<string, unknown>> {
  let one: OneRedis;
  let cluster: LocalRedisCluster;
  try {
    one = await startOneRedis();
  } catch (error) {
    yield { name: 'redis_cluster', skipped: `cannot start a redis-server: ${(error as Error).message}` };
    return;
  }
  try {
    // A loaded 2-core box can stall a node past the tests' 1 s timeout, and a replica then takes
    // over mid-bench: 10 s keeps the three masters the bench started with.
    cluster = await startRedisCluster({ nodeTimeoutMs: 10_000 });
  } catch (error) {
    await one.stop();
    yield {
      name: 'redis_cluster',
      skipped: `cannot start a local redis cluster: ${(error as Error).message}`,
    };
    return;
  }
  try {
    const single: Window[] = [];
    const spread: Window[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      single.push(await twoDaemons(one.url, 1, [one.port], [one.replica], ['all']));
      const masters = await cluster.masters();
      const ports = masters.map((m) => m.port);
      const replicas = cluster.nodes.map((n) => n.port).filter((p) => !ports.includes(p));
      // Named by their slots, which a replica taking over keeps.
      const names = masters.map((m) => m.slots.map(([a, b]) => `${a}-${b}`).join(','));
      spread.push(await twoDaemons(cluster.url, PARTITIONS, ports, replicas, names));
    }
    const total = new Map<string, number>();
    for (const w of spread) for (const [m, n] of w.xadds) total.set(m, (total.get(m) ?? 0) + n);
    const sum = [...total.values()].reduce((a, b) => a + b, 0);
    const shares = [...total.values()].map((n) => n / sum);
    const daemon1 = median(single.map((w) => w.daemonCpuUsPerMessage));
    const daemonN = median(spread.map((w) => w.daemonCpuUsPerMessage));
    const redis1 = median(single.map((w) => w.redisCpuUsPerMessage));
    const redisN = median(spread.map((w) => w.redisCpuUsPerMessage));
    const replica1 = median(single.map((w) => w.replicaCpuUsPerMessage));
    const replicasN = median(spread.map((w) => w.replicaCpuUsPerMessage));
    yield {
      name: 'redis_cluster',
      partitions: PARTITIONS,
      masters: total.size,
      threads: THREADS_PER_DAEMON * 2,
      cluster_masters: [...total.keys()],
      cluster_master_share: shares.map((s) => round(s, 3)),
      cluster_master_share_within_target: shares.map((s) => Math.abs(s - 1 / 3) * 3 <= 0.1),
      cluster_master_share_max_off_third: round(Math.max(...shares.map((s) => Math.abs(s - 1 / 3) * 3)), 3),
      target_master_share_off_third: 0.1,
      one_redis_msgs_per_s: round(median(single.map((w) => w.perSecond)), 0),
      cluster_msgs_per_s: round(median(spread.map((w) => w.perSecond)), 0),
      one_redis_daemon_cpu_us_per_msg: round(daemon1, 1),
      cluster_daemon_cpu_us_per_msg: round(daemonN, 1),
      one_redis_redis_cpu_us_per_msg: round(redis1, 1),
      cluster_masters_cpu_us_per_msg: round(redisN, 1),
      one_redis_replica_cpu_us_per_msg: round(replica1, 1),
      cluster_replicas_cpu_us_per_msg: round(replicasN, 1),
      daemon_cpu_ratio: round(daemonN / daemon1, 2),
      redis_cpu_ratio: round(redisN / redis1, 2),
      redis_cpu_ratio_with_replicas: round((redisN + replicasN) / (redis1 + replica1), 2),
      target_cpu_ratio: 1.1,
      rounds: ROUNDS,
      one_redis_msgs_per_s_all: single.map((w) => round(w.perSecond, 0)),
      cluster_msgs_per_s_all: spread.map((w) => round(w.perSecond, 0)),
      one_redis_redis_cpu_us_per_msg_all: single.map((w) => round(w.redisCpuUsPerMessage, 1)),
      cluster_masters_cpu_us_per_msg_all: spread.map((w) => round(w.redisCpuUsPerMessage, 1)),
    };
  } finally {
    await cluster.stop();
    await one.stop();
  }
}

interface OneRedis {
  url: string;
  port: number;
  replica: number;
  stop(): Promise<void>;
}

/**
 * One Redis as the cluster's masters run (spawnRedisServer's settings, not cluster mode) and a
 * replica of it, on free loopback ports; resolves once the replica is in sync.
 */
async function startOneRedis(): Promise<OneRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-one-redis-'));
  const port = await freePort();
  let replica = await freePort();
  while (replica === port) replica = await freePort();
  const children: ChildProcess[] = [];
  const stop = (): Promise<void> => stopServers(children, dir);
  try {
    // No redis-server on the PATH is a skipped bench: its spawn error is kept, not thrown unheard.
    let failed: Error | undefined;
    const start = (p: number, extra: string[]) =>
      mkdtemp(join(dir, `${p}-`)).then((d) => {
        const child = spawnRedisServer(p, d, extra);
        child.once('error', (error) => {
          failed = error;
        });
        children.push(child);
      });
    await start(port, []);
    await start(replica, ['--replicaof', '127.0.0.1', String(port)]);
    const client = new Redis({ port: replica, host: '127.0.0.1', retryStrategy: () => 100 });
    client.on('error', () => {});
    try {
      const deadline = Date.now() + 10_000;
      while (!/master_link_status:up/.test(await client.info('replication').catch(() => ''))) {
        if (failed) throw failed;
        if (Date.now() > deadline) throw new Error(`replica on ${replica} not in sync within 10 s`);
        await sleep(100);
      }
    } finally {
      client.disconnect();
    }
    return { url: `redis://127.0.0.1:${port}`, port, replica, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function twoDaemons(
  url: string,
  partitions: number,
  masters: number[],
  replicas: number[],
  names: string[],
): Promise<Window> {
  const group = `bench-${randomUUID().slice(0, 8)}`;
  const startAt = Date.now() + 4_000; // both connected and subscribed before the first inject
  const children = twoBenchDaemons({
    url,
    group,
    threads: THREADS_PER_DAEMON,
    startAt,
    warmMs: REDIS_WARM_MS,
    seconds: SECONDS,
    mode: 'ping',
    partitions,
  });
  await sleep(startAt + REDIS_WARM_MS - Date.now());
  const before = await Promise.all(masters.map(sample));
  const replicasBefore = await Promise.all(replicas.map(redisCpuMicros));
  await sleep(SECONDS * 1000);
  const after = await Promise.all(masters.map(sample));
  const replicasAfter = await Promise.all(replicas.map(redisCpuMicros));
  const { perSecond, calls, cpuUs } = await children;
  const xadds = new Map<string, number>();
  let redisCpu = 0;
  for (let i = 0; i < masters.length; i++) {
    xadds.set(names[i]!, after[i]!.xadds - before[i]!.xadds);
    redisCpu += after[i]!.cpu - before[i]!.cpu;
  }
  const replicaCpu = replicasAfter.reduce((a, b, i) => a + b - replicasBefore[i]!, 0);
  await dropKeys(masters, group);
  // Redis's CPU over the messages it took in its own window (the daemons count theirs in theirs,
  // which on a loaded box starts late, after their injections).
  let taken = 0;
  for (const n of xadds.values()) taken += n;
  taken = Math.max(1, taken);
  return {
    perSecond,
    daemonCpuUsPerMessage: cpuUs / calls,
    redisCpuUsPerMessage: redisCpu / taken,
    replicaCpuUsPerMessage: replicaCpu / taken,
    xadds,
  };
}

async function sample(port: number): Promise<{ cpu: number; xadds: number }> {
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  try {
    const stats = await client.info('commandstats');
    const xadds = Number(/cmdstat_xadd:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    return { cpu: await redisCpuMicros(port), xadds };
  } finally {
    client.disconnect();
  }
}

async function dropKeys(ports: number[], group: string): Promise<void> {
  for (const port of ports) {
    const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    try {
      // One key at a time: a cluster node refuses a DEL of keys in several slots.
      // A key whose slot moved (a failover on a loaded box) is left to the node that has it now.
      for (const key of await client.keys(`organism:{${group}*`)) await client.del(key).catch(() => 0);
    } finally {
      client.disconnect();
    }
  }
}
