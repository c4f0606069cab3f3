import { describe, expect, it } from 'vitest';
import type { DeliveryContext } from '../../src/bus/context.ts';
import { RunningHandlers } from '../../src/bus/running.ts';

function run(name: string) {
  return { ctx: { thread: name } as unknown as DeliveryContext, slot: -1 };
}

describe('RunningHandlers', () => {
  it('lists each run until it leaves, whichever order they leave in', () => {
    const running = new RunningHandlers();
    const [a, b, c, d] = [run('a'), run('b'), run('c'), run('d')];
    for (const r of [a, b, c, d]) running.add(r);
    running.delete(b);
    running.delete(b);
    running.delete(run('never listed'));
    expect(running.size).toBe(3);
    expect([...running].map((ctx) => ctx.thread).sort()).toEqual(['a', 'c', 'd']);
    running.delete(a);
    running.delete(d);
    expect([...running].map((ctx) => ctx.thread)).toEqual(['c']);
    running.delete(c);
    expect(running.size).toBe(0);
    expect([a, b, c, d].map((r) => r.slot)).toEqual([-1, -1, -1, -1]);
  });

  it('iterates the runs listed when the loop began, even if one leaves meanwhile', () => {
    const running = new RunningHandlers();
    const [a, b] = [run('a'), run('b')];
    running.add(a);
    running.add(b);
    const visited: string[] = [];
    for (const ctx of running) {
      visited.push(ctx.thread);
      running.delete(a);
    }
    expect(visited).toEqual(['a', 'b']);
  });
});
