/**
 * Token buckets per caller (token name, or client address when the API is open): `perSecond`
 * tokens refill each second up to `burst`. Used on inject, so one noisy client gets 429 with
 * Retry-After instead of filling every queue. The table of buckets is bounded: the least recently
 * seen caller is forgotten first (it starts again with a full bucket, which is the safe side).
 */
import { type RecencyTable, recencyTable } from '../recency.ts';

export interface RateLimitOptions {
  /** Tokens per second; 0 turns the limit off. */
  perSecond: number;
  /** Bucket size: how many requests may come at once after a quiet spell. */
  burst: number;
  /** Callers remembered. Default 10,000. */
  maxKeys?: number;
  now?: () => number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  last: number;
}

export class RateLimiter {
  /** Recency is a request; not a Map re-inserted per request (see ../recency.ts for why). */
  readonly #buckets: RecencyTable<string, Bucket>;
  readonly #options: Required<RateLimitOptions>;

  constructor(options: RateLimitOptions) {
    this.#options = { maxKeys: 10_000, now: () => performance.now(), ...options };
    if (this.#options.burst < 1) this.#options.burst = 1;
    this.#buckets = recencyTable(this.#options.maxKeys);
  }

  get enabled(): boolean {
    return this.#options.perSecond > 0;
  }

  take(key: string): RateDecision {
    if (!this.enabled) return { ok: true };
    const { perSecond, burst } = this.#options;
    const now = this.#options.now();
    let bucket = this.#buckets.get(key);
    if (bucket) {
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.last) / 1000) * perSecond);
      bucket.last = now;
    } else {
      bucket = { tokens: burst, last: now };
      this.#buckets.set(key, bucket);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: (1 - bucket.tokens) / perSecond };
  }
}
