import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.ts';
import { createInFlight } from '../../src/bus/in-flight.ts';
import type { ThreadState } from '../../src/bus/threads.ts';

function thread(inFlight: number): ThreadState {
  return {
    id: 't',
    created: 0,
    lastActive: 0,
    hops: 0,
    inFlight,
    stopped: false,
    scope: undefined,
    frames: new Set(),
  };
}

/** The part of a bus InFlight uses, with a shared store whose settle answers as `settled` does. */
function sharedBus(settled: () => Promise<number>, heard: string[] = []): BusContext {
  return {
    store: { shared: true, settled },
    watchers: new Map(),
    hooks: { thread: (id: string, event: string) => heard.push(`${id} ${event}`) },
    logger: pino({ level: 'silent' }),
  } as unknown as BusContext;
}

describe('InFlight with a shared thread store', () => {
  it('keeps the local count until the store says what is left: no passing "idle" while another daemon works', async () => {
    const answers: Array<(left: number) => void> = [];
    const heard: string[] = [];
    const inFlight = createInFlight(
      sharedBus(() => new Promise<number>((resolve) => answers.push(resolve)), heard),
    );
    const t = thread(1);
    inFlight.settle(t);
    expect(t.inFlight).toBe(1);
    answers[0]!(2); // another daemon published meanwhile
    await Promise.resolve();
    expect(t.inFlight).toBe(2);
    expect(heard).toEqual([]);
    inFlight.settle(t);
    answers[1]!(0);
    await Promise.resolve();
    expect(t.inFlight).toBe(0);
    expect(heard).toEqual(['t idle']);
  });

  it('lowers the local count itself when the store cannot answer', async () => {
    const t = thread(2);
    createInFlight(sharedBus(() => Promise.reject(new Error('redis down')))).settle(t);
    await new Promise((r) => setImmediate(r));
    expect(t.inFlight).toBe(1);
  });
});

describe('InFlight in one daemon', () => {
  it("dates a thread's idle time from the settle that leaves nothing in flight", () => {
    const heard: string[] = [];
    const bus = {
      store: { shared: false },
      watchers: new Map(),
      hooks: { thread: (id: string, event: string) => heard.push(`${id} ${event}`) },
      logger: pino({ level: 'silent' }),
    } as unknown as BusContext;
    const inFlight = createInFlight(bus);
    const t = thread(2);
    inFlight.settle(t);
    expect(t.inFlight).toBe(1);
    expect(heard).toEqual([]);
    const before = Date.now();
    inFlight.settle(t);
    expect(t.inFlight).toBe(0);
    expect(t.lastActive).toBeGreaterThanOrEqual(before);
    expect(heard).toEqual(['t idle']);
  });
});
