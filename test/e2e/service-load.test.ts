/**
 * Load: 10,000 threads injected over HTTP, many at once, all complete and the daemon's resident
 * memory stays under a generous bound. When a queue is full, inject answers 503 (and over the
 * rate limit 429), each with Retry-After, instead of growing memory. Bounds, not speed: nothing
 * here asserts how fast anything is.
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { call, chainYaml, metric, organismDir, startOn, until } from '../server/helpers.ts';

const THREADS = 10_000;
const IN_FLIGHT = 128;
const QUEUE = 2_000;
const RSS_BOUND = 400 * 1024 * 1024;

const yaml = (server = 'inject_per_second: 0') => `organism:
  name: load-test
  log_level: warn
server:
  ${server}
bus:
  queue_length: ${QUEUE}
listeners:
${chainYaml()}`;

let daemon: DaemonProcess;
let file: string;

beforeAll(async () => {
  ({ file } = await organismDir(yaml()));
  daemon = await startOn(file);
});
afterAll(async () => {
  await daemon?.stop();
});

const rss = async () => (await call(daemon.url, '/api/v1/organism')).json.memory.rss_bytes as number;
const printed = async () =>
  metric((await call(daemon.url, '/metrics')).text, 'organism_messages_total', {
    listener: 'printer',
    outcome: 'ok',
  });

describe('10,000 concurrent threads over HTTP', () => {
  it('all complete, with memory bounded', async () => {
    let next = 0;
    const accepted: string[] = [];
    let peak = 0;
    const worker = async () => {
      while (next < THREADS) {
        const i = next++;
        for (;;) {
          const res = await fetch(`${daemon.url}/api/v1/inject`, {
            method: 'POST',
            headers: daemon.headers({ 'content-type': 'application/json' }),
            body: JSON.stringify({ to: 'greeter', payload: `<greeting><name>load${i}</name></greeting>` }),
          });
          const body = (await res.json()) as { thread?: string };
          if (res.status === 202) {
            accepted.push(body.thread!);
            break;
          }
          // Full queues answer 503 with Retry-After; a real client waits, this one only briefly.
          expect(res.status).toBe(503);
          expect(res.headers.get('retry-after')).toBe('1');
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    const sampler = setInterval(() => {
      rss().then(
        (value) => {
          peak = Math.max(peak, value);
        },
        () => {},
      );
    }, 250);
    try {
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      await until(async () => ((await printed()) >= THREADS ? true : undefined), 120_000);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, await rss());
    expect(new Set(accepted).size).toBe(THREADS);
    expect(await printed()).toBe(THREADS);
    const active = (await call(daemon.url, '/api/v1/threads?status=active&limit=1')).json.total;
    expect(active).toBe(0);
    const info = (await call(daemon.url, '/api/v1/organism')).json;
    expect(info.threads.in_history).toBe(THREADS);
    expect(info.messages.in_flight).toBe(0);
    // A sample of threads, each complete.
    for (const thread of accepted.filter((_, i) => i % 1000 === 0)) {
      const view = (await call(daemon.url, `/api/v1/threads/${thread}`)).json;
      expect(view.messages.map((m: { to: string }) => m.to)).toEqual(['greeter', 'shouter', 'printer']);
    }
    expect(peak).toBeLessThan(RSS_BOUND);
    // Whether queues filled here depends on the machine; the next test fills one for certain.
  }, 180_000);

  it('answers 503 when a queue is full instead of growing, then catches up', async () => {
    const before = await printed();
    expect((await call(daemon.url, '/api/v1/listeners/greeter/pause', { method: 'POST' })).status).toBe(200);
    let accepted = 0;
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < QUEUE + 10 && !refused; i++) {
      const res = await call(daemon.url, '/api/v1/inject', {
        body: { to: 'greeter', payload: `<greeting><name>full${i}</name></greeting>` },
      });
      if (res.status === 202) accepted++;
      else refused = res;
    }
    expect(accepted).toBe(QUEUE);
    expect(refused?.status).toBe(503);
    expect(refused?.json.error.code).toBe('bus.busy');
    expect(refused?.headers.get('retry-after')).toBe('1');
    const state = (await call(daemon.url, '/api/v1/listeners/greeter')).json.state;
    expect(state).toMatchObject({ paused: true, depth: QUEUE, capacity: QUEUE });
    expect(await rss()).toBeLessThan(RSS_BOUND);
    const metrics = (await call(daemon.url, '/metrics')).text;
    expect(metric(metrics, 'organism_injects_total', { status: '503' })).toBeGreaterThan(0);
    expect(metric(metrics, 'organism_queue_depth', { listener: 'greeter' })).toBe(QUEUE);

    expect((await call(daemon.url, '/api/v1/listeners/greeter/resume', { method: 'POST' })).status).toBe(200);
    await until(async () => ((await printed()) >= before + QUEUE ? true : undefined), 60_000);
    expect(await printed()).toBe(before + QUEUE);
    // 2,010 injects one after the other: seconds on a quiet box, a minute beside other test files.
    // A timeout here would leave the loop injecting into the next test's rate limit.
  }, 120_000);

  it('answers 429 over the inject rate limit (applied by a reload)', async () => {
    await writeFile(file, yaml('inject_per_second: 1\n  inject_burst: 3'));
    expect((await call(daemon.url, '/api/v1/organism/reload', { method: 'POST' })).status).toBe(200);
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 5; i++) {
      const res = await call(daemon.url, '/api/v1/inject', {
        body: { to: 'greeter', payload: `<greeting><name>rate${i}</name></greeting>` },
      });
      statuses.push(res.status);
      if (res.status === 429) limited ??= res;
    }
    expect(statuses.slice(0, 3)).toEqual([202, 202, 202]);
    expect(statuses.slice(3)).toContain(429);
    expect(limited?.json.error.code).toBe('server.rate_limited');
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
