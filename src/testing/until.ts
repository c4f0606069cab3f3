/**
 * until(): the one poller of the test kit. Tests wait for an outcome (a message in a thread, a
 * file on disk, a daemon answering) by asking again until it is there, never by sleeping a fixed
 * time, so a slow machine makes a test slower, not red.
 */
import { WaitTimeoutError } from '../errors.ts';

export interface UntilOptions {
  /** Named in the error when time runs out ("the reply from greeter"). Default 'the condition'. */
  what?: string;
  /** Give up after this long, ms. Default 10 000. */
  timeoutMs?: number;
  /** Pause between two probes, ms. Default 20. */
  intervalMs?: number;
  /**
   * What a probe that throws does: `fail` the wait at once (default), or `retry` it as "not yet"
   * (a daemon that is still starting refuses connections); the last error is named on timeout.
   */
  errors?: 'fail' | 'retry';
}

export function defaultUntilOptions(): Required<UntilOptions> {
  return { what: 'the condition', timeoutMs: 10_000, intervalMs: 20, errors: 'fail' };
}

/** What a probe returns while the outcome is not there yet. */
export type NotYet = undefined | null | false;

/**
 * Calls `probe` until it returns something other than undefined, null or false, and resolves with
 * that value (so `const reply = await until(() => replies.find(...))` hands the reply over).
 * A probe that throws fails the wait at once unless `errors: 'retry'`. Rejects with
 * WaitTimeoutError (`testing.timeout`) when `timeoutMs` passes first.
 */
export async function until<T>(
  probe: () => T | NotYet | Promise<T | NotYet>,
  options: UntilOptions | string = {},
): Promise<T> {
  const { what, timeoutMs, intervalMs, errors } = {
    ...defaultUntilOptions(),
    ...(typeof options === 'string' ? { what: options } : options),
  };
  const deadline = Date.now() + timeoutMs;
  let failure: unknown;
  for (;;) {
    let value: T | NotYet;
    try {
      value = await probe();
    } catch (error) {
      if (errors === 'fail') throw error;
      failure = error;
      value = undefined;
    }
    if (value !== undefined && value !== null && value !== false) return value as T;
    if (Date.now() >= deadline) {
      const last =
        failure === undefined
          ? ''
          : ` (the probe last threw: ${(failure as Error)?.message ?? String(failure)})`;
      throw new WaitTimeoutError(`${what}${last}`, timeoutMs);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
