/**
 * Real daemons on Redis when things go wrong: the Redis server restarts under them mid-flow (a
 * redis-server of our own, append-only file on), and a poison message crashes every daemon that
 * handles it while a garbage entry sits in a stream. Nothing accepted is lost; the poison ends in
 * the dead-letter stream after bus.max_deliveries deliveries and the rest flows on.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { readDeadLetters } from '../../src/bus/transport/redis/dead-letter.ts';
import { BusKeys } from '../../src/bus/transport/redis/options.ts';
import type { DeadLetterPage } from '../../src/server/service.ts';
import { type DaemonProcess, daemonFetch } from '../helpers/daemon.ts';
import {
  allDone,
  type Cluster,
  cluster,
  dropGroup,
  inject,
  type OwnRedis,
  organismYaml,
  ownRedis,
  SHARED_REDIS,
  uniqueGroup,
  until,
  view,
} from './redis-support/harness.ts';

let running: Cluster | undefined;
let redis: OwnRedis | undefined;
let group = '';
afterEach(async () => {
  await running?.stopAll();
  await redis?.dispose();
  if (group && !redis) await dropGroup(SHARED_REDIS, group);
  running = undefined;
  redis = undefined;
  group = '';
});

describe('recovery', { timeout: 90_000 }, () => {
  it('reconnects after Redis restarts mid-flow and loses no accepted message', async () => {
    redis = await ownRedis();
    group = uniqueGroup();
    running = await cluster(organismYaml({ redisUrl: redis.url, group }), 2, { WORKER_MS: '150' });
    const [a, b] = running.daemons as [DaemonProcess, DaemonProcess];
    const threads: string[] = [];
    for (let i = 0; i < 20; i++) {
      threads.push(await inject((i % 2 === 0 ? a : b).url, `<job><n>${i}</n><kind>work</kind></job>`));
    }
    // Some finished, some still queued or running: now Redis goes away.
    await until(async () => {
      let done = 0;
      for (const t of threads)
        if ((await view(a.url, t))?.messages.some((m) => m.kind === 'response')) done++;
      return done >= 3;
    }, 'the first answers');
    await redis.stop();
    // Injections while Redis is down wait for it: accepted (202) once Redis has them.
    const late = Array.from({ length: 4 }, (_, i) =>
      inject((i % 2 === 0 ? a : b).url, `<job><n>${100 + i}</n><kind>work</kind></job>`),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    await redis.start();
    threads.push(...(await Promise.all(late)));
    const done = await allDone(a.url, threads, 60_000);
    expect(done.size).toBe(24);
    for (const [thread, answer] of done) {
      const n = threads.indexOf(thread);
      expect(answer).toContain(`<n>${n < 20 ? n : 100 + n - 20}</n>`);
    }
    // Both daemons still serve after the restart.
    expect(await inject(b.url, '<job><n>999</n><kind>work</kind></job>')).toBeTruthy();
  });

  it('dead-letters a poison message after max_deliveries while the rest flows on', async () => {
    group = uniqueGroup();
    // 3, not 2: the daemons the poison crashes hold other messages too, which are redelivered as
    // suspects one at a time; with 3 deliveries allowed those still finish.
    const maxDeliveries = 3;
    running = await cluster(
      organismYaml({ redisUrl: SHARED_REDIS, group, maxDeliveries, handlerTimeoutMs: 1_500 }),
      2,
    );
    const supervisor = superviseRestarts(running);
    const keys = new BusKeys(group);
    const raw = new Redis(SHARED_REDIS);
    try {
      // Nothing dead-lettered yet: the API lists nothing and the gauge reads 0.
      const first = running.daemons[0]!.url;
      expect(await (await daemonFetch(`${first}/api/v1/dead-letters`)).json()).toEqual({
        dead_letters: [],
        total: 0,
        next: null,
      });
      expect(await (await daemonFetch(`${first}/metrics`)).text()).toMatch(/^organism_bus_dead_letters 0$/m);
      const poison = await inject(first, '<job><n>666</n><kind>crash</kind></job>');
      // And an entry nobody can decode, written straight into a listener's stream.
      await raw.xadd(keys.inbox('worker'), '*', 'not', 'a message');
      const threads: string[] = [];
      for (let i = 0; i < 10; i++) {
        // A daemon may die under the request (the poison): try again on a live one.
        threads.push(
          await until(
            async () => inject((await supervisor.any()).url, `<job><n>${i}</n><kind>work</kind></job>`),
            `job ${i} accepted`,
          ),
        );
      }
      await until(
        async () => (await allDone((await supervisor.any()).url, threads, 5_000)).size,
        'all jobs done',
        60_000,
      );
      const letters = await until(
        async () => {
          const found = await readDeadLetters(raw, keys);
          return found.length === 2 ? found : undefined;
        },
        'two dead letters',
        60_000,
      );
      const crash = letters.find((l) => l.message)!;
      const garbage = letters.find((l) => !l.message)!;
      expect(crash).toMatchObject({ listener: 'crasher', deliveries: maxDeliveries });
      expect(crash.message).toMatchObject({ thread: poison, to: 'crasher', from: 'dispatch' });
      expect(crash.reason).toMatch(/delivered 3 times without an acknowledgement/);
      expect(garbage).toMatchObject({ listener: 'worker', deliveries: maxDeliveries });
      expect(garbage.reason).toMatch(/cannot decode/);
      expect(JSON.parse(garbage.raw!)).toEqual(['not', 'a message']);
      // The poison took down a daemon once per delivery, and no more.
      expect(supervisor.crashes()).toBe(maxDeliveries);
      // Its thread is finished with (not "active" forever), and nothing is left unacknowledged.
      const survivor = await supervisor.any();
      await until(
        async () => (await view(survivor.url, poison))?.status === 'idle',
        'the poison thread to settle',
      );
      for (const listener of ['dispatch', 'worker', 'crasher']) {
        const [pending] = (await raw.call('XPENDING', keys.inbox(listener), group)) as [number];
        expect(Number(pending), listener).toBe(0);
      }
      const metrics = await (await daemonFetch(`${survivor.url}/metrics`)).text();
      expect(metrics).toMatch(/^organism_bus_dead_letters 2$/m);
      // The API shows both, newest first, a page at a time.
      const all = (await (await daemonFetch(`${survivor.url}/api/v1/dead-letters`)).json()) as DeadLetterPage;
      expect(all.total).toBe(2);
      expect(all.next).toBeNull();
      expect(all.dead_letters.map((d) => d.id)).toEqual(letters.map((l) => l.id));
      const apiCrash = all.dead_letters.find((d) => d.message !== null)!;
      expect(apiCrash).toMatchObject({
        listener: 'crasher',
        message: crash.message!.id,
        thread: poison,
        from: 'dispatch',
        tag: 'crash',
        deliveries: maxDeliveries,
        consumer: crash.consumer,
      });
      expect(apiCrash.reason).toMatch(/delivered 3 times without an acknowledgement/);
      expect(Date.parse(apiCrash.time)).toBeGreaterThan(Date.now() - 120_000);
      const apiGarbage = all.dead_letters.find((d) => d.message === null)!;
      expect(apiGarbage).toMatchObject({ listener: 'worker', thread: null, deliveries: maxDeliveries });
      expect(apiGarbage.reason).toMatch(/cannot decode/);
      const page1 = (await (
        await daemonFetch(`${survivor.url}/api/v1/dead-letters?limit=1`)
      ).json()) as DeadLetterPage;
      expect(page1.dead_letters.map((d) => d.id)).toEqual([letters[0]!.id]);
      expect(page1.next).toBe(letters[0]!.id);
      const page2 = (await (
        await daemonFetch(`${survivor.url}/api/v1/dead-letters?limit=1&cursor=${page1.next}`)
      ).json()) as DeadLetterPage;
      expect(page2.dead_letters.map((d) => d.id)).toEqual([letters[1]!.id]);
      expect(page2.next).toBeNull();
      const bad = await daemonFetch(`${survivor.url}/api/v1/dead-letters?cursor=yesterday`);
      expect(bad.status).toBe(400);
    } finally {
      supervisor.stop();
      raw.disconnect();
    }
  });
});

/** Restarts any daemon of the cluster that dies, as systemd would, and counts the deaths. */
function superviseRestarts(c: Cluster): { any(): Promise<DaemonProcess>; crashes(): number; stop(): void } {
  let crashes = 0;
  let stopped = false;
  const alive = new Set<DaemonProcess>();
  const watch = (d: DaemonProcess) => {
    alive.add(d);
    d.child.once('exit', () => {
      alive.delete(d);
      if (stopped) return;
      crashes++;
      void c.start().then(watch);
    });
  };
  for (const d of c.daemons) watch(d);
  return {
    any: () => until(async () => [...alive].find((d) => d.child.exitCode === null), 'a live daemon'),
    crashes: () => crashes,
    stop: () => {
      stopped = true;
    },
  };
}
