/**
 * Shared by the Redis benches: whether a redis-server answers (so a bench without one is skipped,
 * not failed), and the two bench daemons a window measures.
 */
import { Redis } from 'ioredis';
import type { OptimizeFor } from '../src/daemon/v8-flags.ts';
import { runChild } from './support.ts';

/** True when a PING to `url` is answered; one try, no reconnect, no error logged. */
export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * The bench daemons' Node flags: the young generation is left to the optimize_for profile they run
 * (src/daemon/v8-flags.ts), as in a user's daemon, which bin/organism.js starts with no cap on it.
 * DAEMON_NODE_FLAGS' `--max-semi-space-size=4` held a speed daemon's to a quarter of what it grows
 * to: two daemons pinging in turns spent 67.9/70.2/72.5 µs a message capped against 64.8/67.8/66.9
 * uncapped (call and answer: no difference in three turns). `--single-threaded-gc` stays, as
 * docs/guide/service.md advises where a daemon shares two cores with Redis.
 */
const REDIS_DAEMON_NODE_FLAGS = ['--single-threaded-gc'];

/**
 * How long the Redis benches' daemons (and the floor) run before their measured window. A
 * daemon's per-turn code (the script call's encoding, the write, the reply's decoding: a few
 * hundred calls a second, where per-message code makes tens of thousands) reaches V8's optimizing
 * tier seconds after the traffic starts: with --trace-opt, callScript at 3.5 s, clearBuffer at 5.1,
 * the batch's flush at 7.4, the reply decoder at 9.8, nothing of the path after 10 s. A window
 * starting 1.5 s in measured the daemon half-compiled: its compiler threads used 9-10 % of its CPU
 * there (3 % from 8 s in), a cost a long-running daemon pays once.
 */
export const REDIS_WARM_MS = 10_000;

/** What the two bench daemons of a window measured, summed. */
export interface DaemonTotals {
  /** Each daemon's calls over its own measured seconds, added. */
  perSecond: number;
  calls: number;
  cpuUs: number;
  /** Replies that were not answers (call mode): anything but 0 means the loop is broken. */
  refused: number;
}

/**
 * Runs two bench daemons (bench/redis-daemon.ts) in consumer group `group` on `url`: both inject
 * at `startAt`, warm up `warmMs`, measure `seconds`; resolves with their figures summed.
 * `partitions` sets bus.partitions (left out: the daemon's default, one); `optimizeFor` the
 * daemons' organism.optimize_for (left out: speed, what a busy daemon is given).
 */
export async function twoBenchDaemons(o: {
  url: string;
  group: string;
  threads: number;
  startAt: number;
  warmMs: number;
  seconds: number;
  mode: 'ping' | 'call';
  partitions?: number;
  optimizeFor?: OptimizeFor;
}): Promise<DaemonTotals> {
  const args = [
    o.url,
    o.group,
    String(o.threads),
    String(o.startAt),
    String(o.warmMs),
    String(o.seconds),
    o.mode,
    String(o.partitions ?? 1),
    o.optimizeFor ?? 'speed',
  ];
  const outs = await Promise.all([
    runChild('./redis-daemon.ts', args, REDIS_DAEMON_NODE_FLAGS),
    runChild('./redis-daemon.ts', args, REDIS_DAEMON_NODE_FLAGS),
  ]);
  const totals: DaemonTotals = { perSecond: 0, calls: 0, cpuUs: 0, refused: 0 };
  for (const out of outs) {
    const run = JSON.parse(out) as { calls: number; seconds: number; cpuUs: number; refused: number };
    totals.perSecond += run.calls / run.seconds;
    totals.calls += run.calls;
    totals.cpuUs += run.cpuUs;
    totals.refused += run.refused;
  }
  return totals;
}
