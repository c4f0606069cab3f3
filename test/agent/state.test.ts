/** The per-thread loop store: bounded, and loops waiting too long are dropped (and reported). */
import { describe, expect, it } from 'vitest';
import { type LoopState, LoopStore, newLoopState } from '../../src/agent/state.ts';

const loop = (thread: string, phase: LoopState['phase'] = 'waiting'): LoopState => ({
  ...newLoopState(thread, 'api', '', ''),
  phase,
});

describe('LoopStore', () => {
  it('drops the oldest loop beyond its capacity and says so', () => {
    const dropped: string[] = [];
    const store = new LoopStore(
      2,
      1000,
      () => 0,
      (s, why) => dropped.push(`${s.thread}:${why}`),
    );
    store.set(loop('a'));
    store.set(loop('b'));
    store.set(loop('a')); // touched: now the newest
    store.set(loop('c'));
    expect(dropped).toEqual(['b:capacity']);
    expect([store.has('a'), store.has('b'), store.has('c')]).toEqual([true, false, true]);
  });

  it('sweeps loops that waited longer than the ttl, not running ones', () => {
    let now = 0;
    const dropped: string[] = [];
    const store = new LoopStore(
      10,
      1000,
      () => now,
      (s, why) => dropped.push(`${s.thread}:${why}`),
    );
    store.set(loop('old'));
    store.set(loop('busy', 'running'));
    now = 500;
    store.set(loop('fresh'));
    now = 1200;
    store.sweep();
    expect(dropped).toEqual(['old:ttl']);
    expect([store.has('old'), store.has('busy'), store.has('fresh')]).toEqual([false, true, true]);
  });
});
