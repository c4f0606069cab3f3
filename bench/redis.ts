/**
 * Scale-out figures, against a redis-server of the bench's own (REDIS_URL names another): started
 * here on a free loopback port without persistence, as the shared one runs, so that nothing else's
 * traffic (a test run, another bench) lands in its windows or its INFO counters; without
 * redis-server on the PATH, the one on 127.0.0.1:6379.
 * - redis_two_daemons_msgs_per_s: two processes, one consumer group, ping payloads looping through
 *   the full pipeline (parse, validate, handle, route, shared thread state, XADD, XREADGROUP, XACK);
 *   every handler call is one message. Each hop writes the thread's hop count and history entry to
 *   Redis; a ping carries its frame, so once a daemon knows a thread it reads no state for it (see
 *   RedisThreadStore.loadFor), as in any organism whose sends expect no answer.
 * - redis_floor_xadd_per_s: the bare library doing the least work for the same traffic: one
 *   client reads a batch with XREADGROUP, acknowledges it and XADDs the same bytes back, with the
 *   same number of messages circulating, reading no more per XREADGROUP than one daemon's reader
 *   may (min(queue_length, 2 x max_concurrent) = 32 with the defaults the daemons run).
 *   Measured in the same run, taking turns with the daemons (ROUNDS times; medians), in a fresh
 *   process as each daemon is (bench/redis-floor.ts). Target
 *   (issue 29): 0.8 of the floor.
 * - daemon_cpu_us_per_msg / redis_cpu_us_per_msg: CPU time per message of the two daemon processes
 *   together (each over its own window, by its own count) and of redis-server (INFO cpu, over the
 *   XADDs INFO commandstats counted in the same window: every handler call publishes one message;
 *   other clients of that server count too): on a box where they share the cores, what a hop
 *   costs. Redis's window is the bench's, not the daemons': on a loaded box a daemon starts
 *   counting late, and dividing by its count gave figures off by half.
 * - optimize_for: the daemons run with organism.optimize_for: speed, as a busy daemon should
 *   (src/daemon/v8-flags.ts); daemon_cpu_us_per_msg_optimize_for_memory is one more ping window
 *   with the default, memory, for what that default costs under load.
 * - call_reply_*: the same for calls that expect an answer (a listener with onReply calls another
 *   that responds, and calls again on each answer): their frames live in Redis and every
 *   delivery reads its thread state. Target (issue 29): 0.6 of the floor.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { OptimizeFor } from '../src/daemon/v8-flags.ts';
import { freePort } from '../test/helpers/ports.ts';
import { stopServers } from '../test/helpers/redis-cluster.ts';
import { median, round, runChild, sleep } from './support.ts';
import { REDIS_WARM_MS, redisAnswers, twoBenchDaemons } from './support-redis.ts';

const SHARED_URL = 'redis://127.0.0.1:6379';
/** Threads per daemon; two daemons, so this many times two messages circulate. */
const THREADS_PER_DAEMON = 32;
const SECONDS = 3;
/** The most one daemon's reader takes per read with the bus defaults: min(1000, 2 x 16). */
const READ_BATCH = 32;
/**
 * Floor and daemons are measured this many times, taking turns, and each figure is the median: on
 * a small box one 3 s window of either swings by ±10%, and turns spread a slow spell over both.
 */
const ROUNDS = 3;

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const own = process.env.REDIS_URL === undefined ? await ownRedis() : undefined;
  const url = process.env.REDIS_URL ?? own?.url ?? SHARED_URL;
  try {
    if (!(await redisAnswers(url))) {
      yield { name: 'redis', skipped: `no redis-server at ${url}` };
      return;
    }
    yield await measure(url, own !== undefined);
  } finally {
    await own?.stop();
  }
}

async function measure(url: string, ownServer: boolean): Promise<Record<string, unknown>> {
  const floors: number[] = [];
  const runs: Array<Awaited<ReturnType<typeof twoDaemons>>> = [];
  const calls: Array<Awaited<ReturnType<typeof twoDaemons>>> = [];
  for (let i = 0; i < ROUNDS; i++) {
    floors.push(await floorPerSecond(url, THREADS_PER_DAEMON * 2));
    runs.push(await twoDaemons(url, 'ping'));
    calls.push(await twoDaemons(url, 'call'));
  }
  const memory = await twoDaemons(url, 'ping', 'memory');
  const floor = median(floors);
  const perSecond = median(runs.map((r) => r.perSecond));
  const callsPerSecond = median(calls.map((r) => r.perSecond));
  return {
    name: 'redis',
    redis_server: ownServer ? 'own' : url,
    redis_two_daemons_msgs_per_s: round(perSecond, 0),
    redis_floor_xadd_per_s: round(floor, 0),
    ratio: round(perSecond / floor, 2),
    target_ratio: 0.8,
    rounds: ROUNDS,
    redis_two_daemons_msgs_per_s_all: runs.map((r) => round(r.perSecond, 0)),
    redis_floor_xadd_per_s_all: floors.map((f) => round(f, 0)),
    messages_in_flight: THREADS_PER_DAEMON * 2,
    floor_read_batch: READ_BATCH,
    daemon_cpu_us_per_msg: round(median(runs.map((r) => r.cpuUsPerMessage)), 1),
    redis_cpu_us_per_msg: round(median(runs.map((r) => r.redisCpuUsPerMessage)), 1),
    optimize_for: 'speed',
    daemon_cpu_us_per_msg_optimize_for_memory: round(memory.cpuUsPerMessage, 1),
    call_reply_msgs_per_s: round(callsPerSecond, 0),
    call_reply_ratio: round(callsPerSecond / floor, 2),
    call_reply_target_ratio: 0.6,
    call_reply_msgs_per_s_all: calls.map((r) => round(r.perSecond, 0)),
    call_reply_daemon_cpu_us_per_msg: round(median(calls.map((r) => r.cpuUsPerMessage)), 1),
    call_reply_redis_cpu_us_per_msg: round(median(calls.map((r) => r.redisCpuUsPerMessage)), 1),
    // Replies that were not answers (huh, SystemError): anything but 0 means the loop is broken.
    call_reply_refused: calls.reduce((sum, r) => sum + r.refused, 0),
  };
}

async function twoDaemons(
  url: string,
  mode: 'ping' | 'call',
  optimizeFor: OptimizeFor = 'speed',
): Promise<{
  perSecond: number;
  cpuUsPerMessage: number;
  redisCpuUsPerMessage: number;
  refused: number;
}> {
  const group = `bench-${randomUUID().slice(0, 8)}`;
  const startAt = Date.now() + 3_000; // both connected and subscribed before the first inject
  const probe = new Redis(url);
  try {
    const children = twoBenchDaemons({
      url,
      group,
      threads: THREADS_PER_DAEMON,
      startAt,
      warmMs: REDIS_WARM_MS,
      seconds: SECONDS,
      mode,
      optimizeFor,
    });
    // Redis's own CPU over the daemons' measured window, per message it took in that window.
    await sleep(startAt + REDIS_WARM_MS - Date.now());
    const before = await redisCounters(probe);
    await sleep(SECONDS * 1000);
    const after = await redisCounters(probe);
    const { perSecond, calls, cpuUs, refused } = await children;
    return {
      perSecond,
      cpuUsPerMessage: cpuUs / calls,
      redisCpuUsPerMessage: ((after.cpu - before.cpu) * 1e6) / Math.max(1, after.xadds - before.xadds),
      refused,
    };
  } finally {
    probe.disconnect();
    await dropKeys(url, `organism:{${group}}:*`);
  }
}

/** Redis's CPU seconds so far and the XADDs it ran (scripts' included). */
async function redisCounters(client: Redis): Promise<{ cpu: number; xadds: number }> {
  const info = (await client.call('INFO', 'cpu', 'commandstats')) as string;
  const field = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  const xadds = Number(/cmdstat_xadd:calls=(\d+)/.exec(info)?.[1] ?? 0);
  return { cpu: field('used_cpu_user') + field('used_cpu_sys'), xadds };
}

/**
 * The floor, in a fresh process of its own as each daemon is: measured inside this one, it ran
 * behind whatever the modules before it left (a whole `npm run bench` read 13,800-16,300 XADDs a
 * second where `node bin/bench.js redis` read 44,000-63,000 the same hour).
 */
async function floorPerSecond(url: string, inFlight: number): Promise<number> {
  const out = await runChild('./redis-floor.ts', [
    url,
    String(inFlight),
    String(READ_BATCH),
    String(REDIS_WARM_MS),
    String(SECONDS),
  ]);
  return (JSON.parse(out) as { perSecond: number }).perSecond;
}

async function dropKeys(url: string, pattern: string): Promise<void> {
  const client = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/**
 * A redis-server of the bench's own on a free loopback port, its files in a temp folder, or
 * undefined when none starts (no redis-server on the PATH): the bench then uses the shared one.
 */
async function ownRedis(): Promise<{ url: string; stop(): Promise<void> } | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-bench-redis-'));
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const stop = () => stopServers([child], dir);
  const url = `redis://127.0.0.1:${port}`;
  let failed = false;
  child.once('error', () => {
    failed = true;
  });
  const deadline = Date.now() + 5_000;
  while (!failed && child.exitCode === null && Date.now() < deadline) {
    if (await redisAnswers(url)) return { url, stop };
    await sleep(50);
  }
  await stop();
  return undefined;
}
