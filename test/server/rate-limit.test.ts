/**
 * The API's per-caller buckets: bounded, the least recently seen caller forgotten first (it comes
 * back with a full bucket), and a busy caller among many keeping its bucket (it stays refused).
 */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/server/rate-limit.ts';

describe('RateLimiter caller table', () => {
  it('forgets the least recently seen caller, not the first one seen', () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, maxKeys: 3, now: () => 0 });
    for (const key of ['a', 'b', 'c']) expect(limiter.take(key).ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false); // a: most recently seen, bucket empty
    expect(limiter.take('d').ok).toBe(true); // forgets b
    expect(limiter.take('a').ok).toBe(false);
    expect(limiter.take('c').ok).toBe(false);
    expect(limiter.take('d').ok).toBe(false);
    expect(limiter.take('b').ok).toBe(true); // forgotten: a full bucket again; forgets a
    expect(limiter.take('a').ok).toBe(true);
  });

  it('keeps a busy caller refused while many others come and go', () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, maxKeys: 100, now: () => 0 });
    const busy: boolean[] = [];
    for (let i = 0; i < 300; i++) {
      limiter.take(`c${i}`);
      busy.push(limiter.take('busy').ok);
    }
    expect(busy.filter(Boolean)).toHaveLength(1);
    expect(busy[0]).toBe(true);
    expect(limiter.take('busy').ok).toBe(false);
    expect(limiter.take('c299').ok).toBe(false); // still remembered
    expect(limiter.take('c200').ok).toBe(true); // forgotten
  });
});
