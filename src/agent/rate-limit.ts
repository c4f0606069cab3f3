/**
 * A backend's `rate_limit_tpm`: a token bucket holding up to one minute of tokens, refilled
 * continuously. A call reserves its estimated prompt size before it goes out and settles with the
 * real usage after, so concurrent agents sharing a backend cannot all pass on the same tokens.
 */
export class TokenBucket {
  #tokens: number;
  #last: number;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number,
  ) {
    this.#tokens = perMinute;
    this.#last = now();
  }

  #refill(): void {
    const t = this.now();
    this.#tokens = Math.min(this.perMinute, this.#tokens + ((t - this.#last) * this.perMinute) / 60_000);
    this.#last = t;
  }

  /**
   * How long until `tokens` are there, ms (0: now). A request larger than the whole bucket only
   * waits for a full bucket, or it would never go.
   */
  waitMs(tokens: number): number {
    this.#refill();
    const need = Math.min(tokens, this.perMinute);
    if (this.#tokens >= need) return 0;
    return Math.ceil(((need - this.#tokens) * 60_000) / this.perMinute);
  }

  /** Takes `tokens` (may go negative: the next callers then wait for the debt to refill). */
  take(tokens: number): void {
    this.#refill();
    this.#tokens -= tokens;
  }

  /** After the call: charges the difference between what it really used and what was reserved. */
  settle(reserved: number, used: number): void {
    this.#refill();
    this.#tokens = Math.min(this.perMinute, this.#tokens + reserved - used);
  }
}

/** A rough prompt size: four characters a token, which is what the limit is checked against. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
