/** The Bus's operator side, in process: hot reconfigure, kill, pause/resume, hooks. */

import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Bus, type DeliveryOutcome } from '../../src/bus/bus.ts';
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import { defineListener } from '../../src/listener/types.ts';
import { until } from '../../src/testing/index.ts';
import {
  listenerSpec,
  settled,
  startBus,
  TEST_BUS,
  TEST_LIMITS,
  type TestListener,
  textPayload,
} from '../helpers/bus.ts';

/** A listener that holds each message until released, answering with `label`. */
function gate(name: string, label: string, next?: string) {
  const waiting: Array<() => void> = [];
  const seen: string[] = [];
  const listener: TestListener = {
    name,
    peers: next ? [next] : [],
    definition: defineListener<{ text: string }>({
      description: `${name} (${label})`,
      payload: textPayload(name),
      async handler(payload, ctx) {
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          ctx.signal.addEventListener('abort', () => resolve());
        });
        seen.push(`${label}:${payload.text}`);
        return next ? ctx.send(next, { text: `${label}:${payload.text}` }) : undefined;
      },
    }),
  };
  return {
    listener,
    seen,
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
    waiting,
  };
}

const sink = () => {
  const got: string[] = [];
  const listener: TestListener = {
    name: 'sink',
    definition: defineListener<{ text: string }>({
      description: 'collects',
      payload: textPayload('sink'),
      handler: (p) => {
        got.push(p.text);
      },
    }),
  };
  return { listener, got };
};

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('Bus.reconfigure', () => {
  it('replaces a listener: queued messages finish on the old version, new ones meet the new', async () => {
    const v1 = gate('worker', 'v1', 'sink');
    const v2 = gate('worker', 'v2', 'sink');
    const out = sink();
    const bus = startBus([v1.listener, out.listener], { bus: { max_concurrent: 1 } });
    const a = await bus.inject({ to: 'worker', payload: '<worker><text>a</text></worker>' });
    const b = await bus.inject({ to: 'worker', payload: '<worker><text>b</text></worker>' });
    await tick();
    const result = bus.reconfigure([listenerSpec(v2.listener), listenerSpec(out.listener)]);
    expect(result).toEqual({ added: [], removed: [], replaced: ['worker'], unchanged: ['sink'] });
    const c = await bus.inject({ to: 'worker', payload: '<worker><text>c</text></worker>' });
    while (v1.waiting.length + v2.waiting.length > 0 || v1.seen.length + v2.seen.length < 3) {
      v1.release();
      v2.release();
      await tick();
    }
    for (const t of [a, b, c]) await settled(bus, t.thread);
    expect(v1.seen).toEqual(['v1:a', 'v1:b']);
    expect(v2.seen).toEqual(['v2:c']);
    expect(out.got.sort()).toEqual(['v1:a', 'v1:b', 'v2:c']);
    await bus.stop(100);
  });

  it('removes a listener: no longer routed to, but it finishes what it holds', async () => {
    const w = gate('worker', 'w');
    const out = sink();
    const bus = startBus([w.listener, out.listener], { bus: { max_concurrent: 1 } });
    const held = await bus.inject({ to: 'worker', payload: '<worker><text>x</text></worker>' });
    await bus.inject({ to: 'worker', payload: '<worker><text>y</text></worker>' });
    await tick();
    expect(bus.reconfigure([listenerSpec(out.listener)]).removed).toEqual(['worker']);
    await expect(bus.inject({ to: 'worker', payload: '<worker><text>z</text></worker>' })).rejects.toThrow(
      /no listener named 'worker'/,
    );
    expect(bus.listeners().map((l) => l.name)).toEqual(['sink']);
    while (w.seen.length < 2) {
      w.release();
      await tick();
    }
    await settled(bus, held.thread);
    expect(w.seen).toEqual(['w:x', 'w:y']);
    expect(bus.stats().queues.worker).toBeUndefined(); // retired once idle

    // Added back later: a fresh queue and subscription.
    const again = gate('worker', 'again');
    expect(bus.reconfigure([listenerSpec(out.listener), listenerSpec(again.listener)]).added).toEqual([
      'worker',
    ]);
    const t = await bus.inject({ to: 'worker', payload: '<worker><text>q</text></worker>' });
    await tick();
    again.release();
    await settled(bus, t.thread);
    expect(again.seen).toEqual(['again:q']);
    await bus.stop(100);
  });

  it('changes nothing when the new listeners do not compile', async () => {
    const out = sink();
    const bus = startBus([out.listener]);
    const bad: TestListener = {
      name: 'bad',
      definition: defineListener({
        description: 'bad schema',
        payload: { tag: 'bad', schema: { type: 'object', properties: { n: { type: 'no-such-type' } } } },
        handler: () => undefined,
      }),
    };
    expect(() => bus.reconfigure([listenerSpec(out.listener), listenerSpec(bad)])).toThrow();
    expect(bus.listeners().map((l) => l.name)).toEqual(['sink']);
    const t = await bus.inject({ to: 'sink', payload: '<sink><text>still</text></sink>' });
    await settled(bus, t.thread);
    expect(out.got).toEqual(['still']);
    await bus.stop(100);
  });
});

describe('kill, pause and resume', () => {
  it('kill drops queued work, aborts the running handler and records why', async () => {
    const w = gate('worker', 'w');
    const outcomes: DeliveryOutcome[] = [];
    const events: string[] = [];
    const bus = new Bus([listenerSpec(w.listener)], new MemoryTransport(), {
      limits: TEST_LIMITS,
      bus: { ...TEST_BUS, max_concurrent: 1 },
      logger: pino({ level: 'silent' }),
      hooks: {
        delivered: (_listener, outcome) => outcomes.push(outcome),
        thread: (_thread, event) => events.push(event),
      },
    });
    bus.start();
    const t = await bus.inject({ to: 'worker', payload: '<worker><text>1</text></worker>' });
    await bus.inject({ to: 'worker', payload: '<worker><text>2</text></worker>', thread: t.thread });
    await bus.inject({ to: 'worker', payload: '<worker><text>3</text></worker>', thread: t.thread });
    await tick();
    expect(bus.stats().queues.worker).toEqual({ depth: 2, active: 1 });
    const report = bus.kill(t.thread, 'tester');
    expect(report).toEqual({ thread: t.thread, status: 'stopped', dropped: 2, aborted: 1 });
    await until(() => bus.stats().queues.worker?.active === 0);
    expect(w.seen).toEqual(['w:1']); // the running one was cut short; its output is discarded
    expect(outcomes.sort()).toEqual(['dropped', 'dropped', 'ok']);
    expect(events).toEqual(['started', 'stopped', 'idle']);
    expect(bus.stats().queues.worker).toEqual({ depth: 0, active: 0 });
    const view = bus.thread(t.thread)!;
    expect(view.status).toBe('stopped');
    expect(view.messages.at(-1)).toMatchObject({ from: 'system', to: 'tester', kind: 'system-error' });
    expect(bus.kill(t.thread)).toMatchObject({ status: 'stopped', dropped: 0 });
    expect(bus.kill('no-such-thread')).toBeUndefined();
    await expect(
      bus.inject({ to: 'worker', payload: '<worker><text>4</text></worker>', thread: t.thread }),
    ).rejects.toThrow(/has been stopped/);
    await bus.stop(100);
  });

  it('pause holds a listener queue; resume runs it; stop lets paused work drain', async () => {
    const out = sink();
    const bus = startBus([out.listener]);
    expect(bus.pause('sink')).toBe(true);
    expect(bus.pause('nobody')).toBe(false);
    const t = await bus.inject({ to: 'sink', payload: '<sink><text>held</text></sink>' });
    await tick();
    expect(out.got).toEqual([]);
    expect(bus.listenerState('sink')).toEqual({
      paused: true,
      depth: 1,
      active: 0,
      capacity: 1000,
      concurrency: 16,
    });
    expect(bus.resume('sink')).toBe(true);
    await settled(bus, t.thread);
    expect(out.got).toEqual(['held']);
    bus.pause('sink');
    await bus.inject({ to: 'sink', payload: '<sink><text>at stop</text></sink>' });
    expect(await bus.stop(1000)).toEqual({ drained: true, abandoned: 0 });
    expect(out.got).toEqual(['held', 'at stop']);
  });
});
