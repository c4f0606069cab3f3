/**
 * Bounded shutdown: a real daemon on a redis-server of the test's own, which is stopped (or frozen
 * with SIGSTOP) while the daemon's handlers run. SIGTERM (or SIGINT) then ends the process within
 * bus.drain_timeout_ms plus 2 s, whatever Redis does; the unacknowledged work stays in Redis for
 * other daemons.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  type Cluster,
  cluster,
  inject,
  jobStarts,
  type OwnRedis,
  ownRedis,
  sleeperYaml,
  until,
} from './redis-support/harness.ts';

const DRAIN_MS = 2_000;

let running: Cluster | undefined;
let redis: OwnRedis | undefined;
let dir = '';
afterEach(async () => {
  await running?.stopAll();
  await redis?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
  running = undefined;
  redis = undefined;
  dir = '';
});

/**
 * Sends `signal` and resolves with how long the process took to exit (up to a few seconds more
 * than allowed: the test's afterEach kills one that is still there), and its exit code.
 */
async function stopTimed(
  d: DaemonProcess,
  signal: NodeJS.Signals,
): Promise<{ ms: number; code: number | null }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    d.stop(signal),
    new Promise<'running'>((r) => {
      timer = setTimeout(() => r('running'), DRAIN_MS + 5_000);
    }),
  ]);
  clearTimeout(timer);
  if (code === 'running') return { ms: Number.POSITIVE_INFINITY, code: null };
  return { ms: Date.now() - started, code };
}

describe('shutdown with Redis gone', { timeout: 60_000 }, () => {
  const cases = [
    { signal: 'SIGTERM', redisIs: 'stopped' },
    { signal: 'SIGINT', redisIs: 'stopped' },
    // Connections open, no answers: every wait for Redis needs its own deadline.
    { signal: 'SIGTERM', redisIs: 'frozen' },
  ] as const;
  for (const { signal, redisIs } of cases) {
    it(`${signal} ends the daemon within drain_timeout_ms + 2 s while its handlers run and Redis is ${redisIs}`, async () => {
      redis = await ownRedis();
      dir = await mkdtemp(join(tmpdir(), 'organism-shutdown-'));
      const log = join(dir, 'starts.jsonl');
      running = await cluster(
        sleeperYaml({ redisUrl: redis.url, group: 'shutdown-test', drainTimeoutMs: DRAIN_MS }),
        1,
        { SLEEPER_LOG: log, SLEEPER_MS: '60000' },
      );
      const d = running.daemons[0]!;
      for (let i = 0; i < 3; i++) await inject(d.url, `<nap><n>${i}</n></nap>`, 'sleeper');
      await until(async () => (await jobStarts(log)).length === 3, 'the jobs to start');
      if (redisIs === 'stopped') await redis.stop();
      else redis.freeze();
      const { ms, code } = await stopTimed(d, signal);
      console.log(
        `shutdown (${signal}, redis ${redisIs}, drain_timeout_ms ${DRAIN_MS}): exited ${code} after ${ms} ms`,
      );
      expect(ms).toBeLessThanOrEqual(DRAIN_MS + 2_000);
      // Not the last-line exit (1): every step of the shutdown kept its own deadline.
      expect(code).toBe(0);
      expect(d.stdout()).toMatch(/shutting down/);
      // The work it was doing is still Redis's to give to another daemon: nothing was acknowledged.
      if (redisIs === 'stopped') await redis.start();
      else redis.thaw();
      const raw = new Redis(redis.url);
      try {
        const [pending] = (await raw.call(
          'XPENDING',
          'organism:{shutdown-test}:in:sleeper',
          'shutdown-test',
        )) as [number];
        expect(Number(pending)).toBe(3);
      } finally {
        raw.disconnect();
      }
    });
  }
});
