/** The loop detector's memory of threads: a window per thread, the least recently used forgotten first. */
import { describe, expect, it } from 'vitest';
import { LoopDetector } from '../../src/tools/limits.ts';

describe('LoopDetector', () => {
  it('the same call `repeats` times within the window of one thread is a loop; other threads are apart', () => {
    const d = new LoopDetector({ repeats: 3, window: 5, maxThreads: 10 });
    expect(d.record('t1', 'k')).toBe(false);
    expect(d.record('t2', 'k')).toBe(false);
    expect(d.record('t1', 'k')).toBe(false);
    expect(d.record('t1', 'k')).toBe(true);
    expect(d.record('t2', 'k')).toBe(false);
  });

  it('a call that has left the window no longer counts', () => {
    const d = new LoopDetector({ repeats: 2, window: 3, maxThreads: 10 });
    expect(d.record('t', 'a')).toBe(false);
    for (const other of ['b', 'c', 'd']) expect(d.record('t', other)).toBe(false);
    expect(d.record('t', 'a')).toBe(false); // the first 'a' is four calls back, outside a window of 3
    expect(d.record('t', 'a')).toBe(true);
  });

  it('forgets the least recently used thread when full, and keeps one in use', () => {
    const d = new LoopDetector({ repeats: 2, window: 5, maxThreads: 2 });
    d.record('busy', 'x');
    d.record('idle', 'x');
    d.record('busy', 'y'); // busy is now the most recently used
    d.record('new', 'x'); // a third thread: idle goes
    expect(d.record('busy', 'x')).toBe(true); // busy's first 'x' is remembered
    expect(d.record('idle', 'x')).toBe(false); // idle started afresh
  });

  it('one busy thread among many known ones is still tracked (no loss from re-ordering)', () => {
    const d = new LoopDetector({ repeats: 3, window: 5, maxThreads: 10_000 });
    for (let i = 0; i < 10_000; i++) d.record(`t${i}`, 'k');
    let looped = 0;
    for (let i = 0; i < 5_000; i++) if (d.record('t5000', `call-${i % 2}`)) looped++;
    // alternating two calls: each repeats 3 times in every window of 5 after the first few
    expect(looped).toBe(5_000 - 4);
    expect(d.record('t9999', 'k')).toBe(false); // still known: its one earlier 'k' plus this one
    expect(d.record('t9999', 'k')).toBe(true);
  });
});
