/** The per-thread loop store: bounded, and loops waiting too long are dropped (and reported). */
import { describe, expect, it } from 'vitest';
import { type LoopState, LoopStore, newLoopState } from '../../src/agent/state.ts';

const loop = (thread: string, phase: LoopState['phase'] = 'waiting'): LoopState => ({
  ...newLoopState(thread, 'api', '', ''),
  phase,
});

/** A store with `max` loops that writes down each drop as `thread:why`. */
function recording(max: number, now: () => number = () => 0): { store: LoopStore; dropped: string[] } {
  const dropped: string[] = [];
  return { store: new LoopStore(max, 1000, now, (s, why) => dropped.push(`${s.thread}:${why}`)), dropped };
}

describe('LoopStore', () => {
  it('drops the oldest loop beyond its capacity and says so', () => {
    const { store, dropped } = recording(2);
    store.set(loop('a'));
    store.set(loop('b'));
    store.set(loop('a')); // touched: now the newest
    store.set(loop('c'));
    expect(dropped).toEqual(['b:capacity']);
    expect([store.has('a'), store.has('b'), store.has('c')]).toEqual([true, false, true]);
  });

  it('sweeps loops that waited longer than the ttl, not running ones', () => {
    let now = 0;
    const { store, dropped } = recording(10, () => now);
    store.set(loop('old'));
    store.set(loop('busy', 'running'));
    now = 500;
    store.set(loop('fresh'));
    now = 1200;
    store.sweep();
    expect(dropped).toEqual(['old:ttl']);
    expect([store.has('old'), store.has('busy'), store.has('fresh')]).toEqual([false, true, true]);
  });

  it('get and has do not count as use; only set does', () => {
    const { store, dropped } = recording(2);
    store.set(loop('a'));
    store.set(loop('b'));
    expect(store.get('a')?.thread).toBe('a');
    expect(store.has('a')).toBe(true);
    store.set(loop('c'));
    expect(dropped).toEqual(['a:capacity']);
    expect(store.size).toBe(2);
  });

  it('keeps a busy loop while many others come and go, dropping the others oldest first', () => {
    const { store, dropped } = recording(50);
    const busy = loop('busy', 'running');
    store.set(busy);
    for (let i = 0; i < 200; i++) {
      store.set(loop(`t${i}`));
      busy.turns++;
      store.set(busy);
    }
    expect(store.get('busy')).toBe(busy);
    expect(busy.turns).toBe(200);
    expect(dropped).toEqual(Array.from({ length: 151 }, (_, i) => `t${i}:capacity`));
  });

  it('sweeps every stale waiting loop, oldest first, wherever it sits among running ones', () => {
    let now = 0;
    const { store, dropped } = recording(10, () => now);
    for (const [thread, phase] of [
      ['w1', 'waiting'],
      ['r1', 'running'],
      ['w2', 'waiting'],
      ['w3', 'waiting'],
      ['r2', 'running'],
      ['w4', 'waiting'],
    ] as const) {
      store.set(loop(thread, phase));
      now += 10;
    }
    now = 2_000;
    store.sweep();
    expect(dropped).toEqual(['w1:ttl', 'w2:ttl', 'w3:ttl', 'w4:ttl']);
    expect(store.size).toBe(2);
    store.set(loop('w5'));
    now = 5_000;
    store.sweep(); // the newest one stale too
    expect(dropped).toEqual(['w1:ttl', 'w2:ttl', 'w3:ttl', 'w4:ttl', 'w5:ttl']);
    expect([store.has('r1'), store.has('r2')]).toEqual([true, true]);
  });
});
