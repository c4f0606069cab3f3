/**
 * ThreadHistory's thread table: most recently active first, the least recently active forgotten
 * past maxThreads, reads never counting as activity, and a busy thread among many keeping all it had.
 */
import { describe, expect, it } from 'vitest';
import { type HistoryEntry, ThreadHistory } from '../../src/bus/history/index.ts';

let clock = 1_000;
const entry = (to: string): HistoryEntry => ({
  id: `m${clock}`,
  from: 'api',
  to,
  kind: 'message',
  payload: '<x/>',
  time: clock++,
});
const order = (h: ThreadHistory) => [...h.threads()].map((t) => t.thread);

describe('ThreadHistory recency', () => {
  it('forgets the least recently active thread; reading a thread is not activity', () => {
    const h = new ThreadHistory({ maxPerThread: 10, maxThreads: 3 });
    h.append('a', entry('x'));
    h.append('b', entry('x'));
    h.append('c', entry('x'));
    h.append('a', entry('y')); // a: most recent
    expect(order(h)).toEqual(['a', 'c', 'b']);
    // Every read of b leaves it the oldest.
    h.messages('b');
    h.summary('b');
    h.has('b');
    h.markStopped('b');
    [...h.threads()];
    h.append('d', entry('x'));
    expect(order(h)).toEqual(['d', 'a', 'c']);
    expect(h.has('b')).toBe(false);
    expect(h.messages('a')?.messages.map((m) => m.to)).toEqual(['x', 'y']);
  });

  it('begin on a known thread is not activity; begin on a new one and reset are', () => {
    const h = new ThreadHistory({ maxPerThread: 10, maxThreads: 3 });
    h.begin('a', 1);
    h.begin('b', 2);
    h.begin('c', 3);
    h.begin('a', 4); // known: stays the oldest
    expect(order(h)).toEqual(['c', 'b', 'a']);
    h.reset('a', [entry('r')]);
    expect(order(h)).toEqual(['a', 'c', 'b']);
    h.begin('d', 5);
    expect(order(h)).toEqual(['d', 'a', 'c']);
    expect(h.summary('a')?.created).toBe(1); // reset kept when it began
  });

  it('keeps a busy thread and every message of it while many others come and go', () => {
    const h = new ThreadHistory({ maxPerThread: 1_000, maxThreads: 100 });
    h.begin('busy', 0);
    for (let i = 0; i < 300; i++) {
      h.append(`t${i}`, entry('x'));
      h.append('busy', entry(`b${i}`));
    }
    expect(h.threadCount).toBe(100);
    const kept = h.messages('busy');
    expect(kept?.messages).toHaveLength(300);
    expect(kept?.messages[0]?.to).toBe('b0');
    expect(kept?.messages[299]?.to).toBe('b299');
    expect(kept?.dropped).toBe(0);
    expect(kept?.created).toBe(0);
    const expected = ['busy', ...Array.from({ length: 99 }, (_, i) => `t${299 - i}`)];
    expect(order(h)).toEqual(expected);
    expect(h.has('t200')).toBe(false);
  });

  it('lists the same threads when the caller appends while it iterates', () => {
    const h = new ThreadHistory({ maxPerThread: 10, maxThreads: 10 });
    for (const id of ['a', 'b', 'c']) h.append(id, entry('x'));
    const seen: string[] = [];
    for (const t of h.threads()) {
      seen.push(t.thread);
      h.append('a', entry('again'));
    }
    expect(seen).toEqual(['c', 'b', 'a']);
    expect(order(h)).toEqual(['a', 'c', 'b']);
  });
});
