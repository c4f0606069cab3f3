/**
 * Retries of one backend: on a retryable LlmError (429, 5xx, network, timeout) wait and try again,
 * up to `retries` more times. The wait is the server's retry-after when it gave one, else
 * exponential backoff with jitter (half fixed, half random, so many agents hitting one limit do not
 * retry in lockstep). A retry-after longer than `maxRetryAfterMs` is not waited out: the error goes
 * up and the client fails over to the next backend instead.
 */
import { LlmError } from '../errors.ts';
import type { LlmClientOptions } from './options.ts';

/** The client's backoff settings (see LlmClientOptions), with the call's retries and signal. */
export interface RetryOptions
  extends Pick<LlmClientOptions, 'backoffBaseMs' | 'backoffMaxMs' | 'maxRetryAfterMs' | 'sleep' | 'random'> {
  retries: number;
  signal: AbortSignal;
  /** Told before each wait (for logs). */
  onRetry?: (error: LlmError, delayMs: number, attempt: number) => void;
}

export async function withRetries<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof LlmError) || !error.retryable || n >= options.retries) throw error;
      if (options.signal.aborted) throw error;
      const after = error.retryAfterMs;
      if (after !== undefined && after > options.maxRetryAfterMs) throw error;
      const delay = after ?? backoffDelay(n, options);
      options.onRetry?.(error, delay, n + 1);
      try {
        await options.sleep(delay, options.signal);
      } catch {
        throw new LlmError('llm.aborted', 'the request was aborted while waiting to retry');
      }
    }
  }
}

/** Delay before retry n+1: min(max, base * 2^n), of which the upper half is random. */
export function backoffDelay(
  n: number,
  options: Pick<RetryOptions, 'backoffBaseMs' | 'backoffMaxMs' | 'random'>,
): number {
  const ceiling = Math.min(options.backoffMaxMs, options.backoffBaseMs * 2 ** n);
  return Math.round(ceiling / 2 + (options.random() * ceiling) / 2);
}
