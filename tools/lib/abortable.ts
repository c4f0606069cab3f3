/** Waiting on work that takes no AbortSignal, for the tools whose libraries have none (DNS, nodemailer). */

/**
 * `promise`, or a rejection with `signal.reason` as soon as the signal aborts, whichever comes
 * first. The work itself is not stopped (it cannot be); the caller just stops waiting for it.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
