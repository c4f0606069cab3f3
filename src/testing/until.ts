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
}

export function defaultUntilOptions(): Required<UntilOptions> {
  return { what: 'the condition', timeoutMs: 10_000, intervalMs: 20 };
}

/** What a probe returns while the outcome is not there yet. */
export type NotYet = undefined | null | false;

/**
 * Calls `probe` until it returns something other than undefined, null or false, and resolves with
 * that value (so `const reply = await until(() => replies.find(...))` hands the reply over).
 * A probe that throws fails the wait at once: catch inside the probe what is expected to fail
 * for a while (a daemon not listening yet). Rejects with WaitTimeoutError (`testing.timeout`)
 * when `timeoutMs` passes first.
 */
export async function until<T>(
  probe: () => T | NotYet | Promise<T | NotYet>,
  options: UntilOptions | string = {},
): Promise<T> {
  const { what, timeoutMs, intervalMs } = {
    ...defaultUntilOptions(),
    ...(typeof options === 'string' ? { what: options } : options),
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value as T;
    if (Date.now() >= deadline) throw new WaitTimeoutError(what, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
