/**
 * In memory a hop is promise callbacks only: a busy organism must still let the event loop turn,
 * or the HTTP API, timers and the trace exporter wait until every thread is idle.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Bus } from '../../src/bus/bus.ts';
import { defineListener } from '../../src/listener/types.ts';
import { startBus } from '../helpers/bus.ts';

const HOPS = 5_000;
let bus: Bus | undefined;

afterEach(async () => {
  await bus?.stop(1_000);
  bus = undefined;
});

/** `<loop><n/></loop>`: the payload of every looping listener here. */
const LOOP = {
  tag: 'loop',
  schema: {
    type: 'object',
    properties: { n: { type: 'integer' } },
    required: ['n'],
    additionalProperties: false,
  },
};

describe('a busy bus in memory', () => {
  it('lets timers and I/O run while threads loop, long before they finish', async () => {
    let hops = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const looper = defineListener<{ n: number }>({
      payload: LOOP,
      handler: (p, ctx) => {
        hops++;
        if (hops >= HOPS) finish();
        if (p.n >= HOPS) return;
        return ctx.send('looper', { n: p.n + 1 });
      },
    });
    bus = startBus([{ name: 'looper', definition: looper, peers: ['looper'] }], {
      limits: { max_thread_hops: HOPS * 4, max_call_depth: HOPS * 4 },
    });
    await Promise.all(
      Array.from({ length: 4 }, () => bus!.inject({ to: 'looper', payload: '<loop><n>1</n></loop>' })),
    );
    const turns: number[] = [];
    const timer = setInterval(() => turns.push(hops), 0);
    await finished;
    clearInterval(timer);
    // The interval fired while the threads were still looping, several times.
    expect(turns.filter((at) => at < HOPS).length).toBeGreaterThanOrEqual(3);
  });

  it('runs the next hop straight after a handler that returned its output, with no microtask turn between', async () => {
    // One handler at a time: the next hop waits for this one's slot, which a handler that returned
    // its result (no promise) gives back at once.
    const seen: Array<{ n: number; microtaskRan: boolean }> = [];
    let microtaskRan = false;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const looper = defineListener<{ n: number }>({
      payload: LOOP,
      handler: (p, ctx) => {
        seen.push({ n: p.n, microtaskRan });
        if (p.n === 1) queueMicrotask(() => (microtaskRan = true));
        if (p.n >= 3) return finish();
        return ctx.send('looper', { n: p.n + 1 });
      },
    });
    bus = startBus([{ name: 'looper', definition: looper, peers: ['looper'] }], {
      bus: { max_concurrent: 1 },
    });
    await bus.inject({ to: 'looper', payload: '<loop><n>1</n></loop>' });
    await finished;
    expect(seen).toEqual([
      { n: 1, microtaskRan: false },
      { n: 2, microtaskRan: false },
      { n: 3, microtaskRan: false },
    ]);
  });
});
