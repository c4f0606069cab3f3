/**
 * Failover in seconds: three real daemons on the real redis-server at 127.0.0.1:6379 run an
 * organism that also has a 300 s agent (timeout_ms: 300000). One is killed with SIGKILL while its
 * handlers run; the others start its messages within 10 s (bus.heartbeat_ms left at its default),
 * and none of the messages the survivors are working on (each runs far longer than the claim
 * time) is taken from them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  type Cluster,
  cluster,
  dropGroup,
  inject,
  type JobStart,
  jobStarts,
  SHARED_REDIS,
  sleeperYaml,
  uniqueGroup,
  until,
} from './redis-support/harness.ts';

const SCRIPT = fileURLToPath(new URL('../../listeners/assistant.script.yaml', import.meta.url));

let running: Cluster | undefined;
let group = '';
afterEach(async () => {
  await running?.stopAll();
  if (group) await dropGroup(SHARED_REDIS, group);
  running = undefined;
  group = '';
});

/** Beside the sleeper, the 300 s agent whose timeout used to set how long a dead daemon's work waited. */
const AGENT = `  - name: assistant
    agent: true
    description: A slow agent.
    prompt: You answer questions.
    timeout_ms: 300000
llm:
  backends:
    - provider: scripted
      script: ${SCRIPT}
`;

describe('failover', { timeout: 90_000 }, () => {
  it("starts a killed daemon's messages on the others within 10 s, with a 300 s agent in the organism", async () => {
    group = uniqueGroup();
    const jobs = 15;
    const dir = await mkdtemp(join(tmpdir(), 'organism-failover-'));
    const log = join(dir, 'starts.jsonl');
    try {
      running = await cluster(sleeperYaml({ redisUrl: SHARED_REDIS, group, more: AGENT }), 3, {
        SLEEPER_LOG: log,
        SLEEPER_MS: '60000',
      });
      const [a, b, c] = running.daemons as [DaemonProcess, DaemonProcess, DaemonProcess];
      // Everything goes in through the daemon that will die, as in the measurement.
      for (let i = 0; i < jobs; i++) await inject(a.url, `<nap><n>${i}</n></nap>`, 'sleeper');
      const before = await until(async () => {
        const s = await jobStarts(log);
        return s.length === jobs ? s : undefined;
      }, 'every job to start');
      const held = before.filter((s) => s.pid === a.child.pid).map((s) => s.n);
      expect(held.length, 'the daemon about to die holds some of the jobs').toBeGreaterThan(0);

      a.child.kill('SIGKILL');
      const killedAt = Date.now();
      await new Promise((r) => a.child.once('exit', r));
      const survivors = new Set([b.child.pid, c.child.pid]);
      const takenOver = await until(
        async () => {
          const again = (await jobStarts(log)).slice(jobs).filter((s) => survivors.has(s.pid));
          const first = new Map<number, JobStart>();
          for (const s of again) if (held.includes(s.n) && !first.has(s.n)) first.set(s.n, s);
          return first.size === held.length ? first : undefined;
        },
        "the dead daemon's jobs to start elsewhere",
        20_000,
      );
      const failoverMs = Math.max(...[...takenOver.values()].map((s) => s.at - killedAt));
      console.log(`failover: ${held.length} jobs of the killed daemon started again within ${failoverMs} ms`);
      expect(failoverMs).toBeLessThanOrEqual(10_000);

      // Long after their claim time (4 s), the survivors still hold what they were working on:
      // nothing started twice but the dead daemon's jobs, once each.
      await new Promise((r) => setTimeout(r, 6_000));
      const all = await jobStarts(log);
      const count = new Map<number, number>();
      for (const s of all) count.set(s.n, (count.get(s.n) ?? 0) + 1);
      for (let n = 0; n < jobs; n++) expect(count.get(n), `job ${n}`).toBe(held.includes(n) ? 2 : 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
