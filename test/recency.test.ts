/** The bounded least-recently-used table the per-thread and per-caller tables share. */
import { describe, expect, it } from 'vitest';
import { recencyTable } from '../src/recency.ts';

describe('recencyTable', () => {
  it('forgets the least recently used key first; get marks use, peek and has do not', () => {
    const evicted: string[] = [];
    const t = recencyTable<string, number>(3, (value, key) => evicted.push(`${key}=${value}`));
    t.set('a', 1);
    t.set('b', 2);
    t.set('c', 3);
    t.get('a'); // a is now the most recent
    t.peek('b');
    t.has('b');
    t.set('d', 4); // b goes: oldest by use, peek and has did not count
    expect(evicted).toEqual(['b=2']);
    expect([...t.keys()]).toEqual(['d', 'a', 'c']);
    expect([...t.rkeys()]).toEqual(['c', 'a', 'd']);
  });

  it('tells onEvict only about keys pushed out, not about delete or a replaced value', () => {
    const evicted: string[] = [];
    const t = recencyTable<string, number>(2, (_value, key) => evicted.push(key));
    t.set('a', 1);
    t.set('a', 2);
    t.set('b', 1);
    t.delete('b');
    t.set('c', 1);
    expect(evicted).toEqual([]);
    t.set('d', 1);
    expect(evicted).toEqual(['a']);
    expect(t.size).toBe(2);
  });

  it('keeps at least one entry whatever max says', () => {
    const t = recencyTable<string, number>(0);
    t.set('a', 1);
    t.set('b', 2);
    expect([...t.keys()]).toEqual(['b']);
  });
});
