/**
 * UsageTracker's per-thread table: bounded, the least recently used thread forgotten first, reads
 * never counting as use, and a busy thread among many keeping its totals.
 */
import { describe, expect, it } from 'vitest';
import { UsageTracker } from '../../src/agent/usage.ts';

const used = { input: 10, output: 5 };

describe('UsageTracker thread table', () => {
  it('forgets the least recently used thread; reads do not count as use, record and seed do', () => {
    const u = new UsageTracker(3);
    u.record('a1', 't1', used);
    u.record('a1', 't2', used);
    u.record('a1', 't3', used);
    u.record('a1', 't1', used); // t1: most recent
    // Every read of t2 leaves it the oldest.
    u.threadTokens('a1', 't2');
    u.knows('a1', 't2');
    u.thread('t2');
    u.stats();
    u.seed('a1', 't2', 100); // already counted: no seed, no use
    u.record('a1', 't4', used);
    expect(u.knows('a1', 't2')).toBe(false);
    expect(Object.keys(u.stats().threads)).toEqual(['t3', 't1', 't4']); // oldest first
    u.seed('a2', 't3', 40); // a new agent in t3: seeded, t3 most recent
    u.record('a1', 't5', used);
    expect(Object.keys(u.stats().threads)).toEqual(['t4', 't3', 't5']);
    expect(u.threadTokens('a2', 't3')).toBe(40);
    expect(u.threadTokens('a1', 't3')).toBe(15);
    expect(u.agent('a1').calls).toBe(6); // per-agent totals are never forgotten
  });

  it('keeps a busy thread and its totals while many others come and go', () => {
    const u = new UsageTracker(100);
    u.seed('agent', 'busy', 1_000);
    for (let i = 0; i < 300; i++) {
      u.record('agent', `t${i}`, used);
      u.record('agent', 'busy', used);
    }
    expect(u.thread('busy').agent).toEqual({
      input_tokens: 3_000,
      output_tokens: 1_500,
      total_tokens: 1_000 + 4_500,
      calls: 300,
    });
    const threads = Object.keys(u.stats().threads);
    expect(threads).toHaveLength(100);
    expect(threads[0]).toBe('t201');
    expect(threads.at(-1)).toBe('busy');
    expect(u.knows('agent', 't200')).toBe(false);
  });
});
