/**
 * Per-call limits that need memory across calls: a token bucket per listener+tool, and a short
 * window of recent calls per thread to stop an agent repeating itself.
 */
import { type RecencyTable, recencyTable } from '../recency.ts';

export interface RateLimit {
  per_minute: number;
  /** Calls allowed at once; defaults to per_minute (a full minute's allowance may be spent at once). */
  burst?: number;
}

interface Bucket {
  tokens: number;
  last: number;
  capacity: number;
  perMs: number;
}

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Takes one token; returns 0 when allowed, else the milliseconds until a token is available. */
  take(key: string, limit: RateLimit): number {
    const now = this.#now();
    const capacity = Math.max(1, limit.burst ?? limit.per_minute);
    const perMs = limit.per_minute / 60_000;
    let bucket = this.#buckets.get(key);
    if (!bucket || bucket.capacity !== capacity || bucket.perMs !== perMs) {
      bucket = { tokens: capacity, last: now, capacity, perMs };
      this.#buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(capacity, bucket.tokens + (now - bucket.last) * perMs);
    bucket.last = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return perMs > 0 ? Math.ceil((1 - bucket.tokens) / perMs) : Number.POSITIVE_INFINITY;
  }
}

export interface LoopOptions {
  /** How many identical calls within the window make a loop (3). */
  repeats: number;
  /** How many of a thread's most recent calls are looked at (5). */
  window: number;
  /** Threads remembered at once; the least recently used is forgotten first. */
  maxThreads: number;
}

export class LoopDetector {
  /** Recency kept without Map re-inserts (see ../recency.ts: one busy thread among 10,000 cost 14-28 µs). */
  readonly #threads: RecencyTable<string, string[]>;
  readonly #options: LoopOptions;

  constructor(options: LoopOptions) {
    this.#options = options;
    this.#threads = recencyTable(options.maxThreads);
  }

  /**
   * Records a call and says whether it makes a loop: the same key `repeats` times within the last
   * `window` calls of the thread, this one included. Refused repeats are recorded too, so an agent
   * that keeps retrying stays refused until it does something else.
   */
  record(thread: string, key: string): boolean {
    let recent = this.#threads.get(thread);
    if (!recent) {
      recent = [];
      this.#threads.set(thread, recent);
    }
    recent.push(key);
    if (recent.length > this.#options.window) recent.shift();
    let count = 0;
    for (const k of recent) if (k === key) count++;
    return count >= this.#options.repeats;
  }
}
