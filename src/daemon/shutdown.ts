/**
 * What stops `organism run`, and the bound on how long stopping takes.
 *
 * - SIGTERM and SIGINT: the first starts the shutdown. Repeats are ignored: npm forwards the
 *   signal it gets to the daemon, so a Ctrl-C in a terminal arrives twice (once from the terminal,
 *   once from npm), and the second must not cut the drain short.
 * - The end of the process that started the daemon, when npm started it (`npm start`, `npx
 *   organism run`): npm passes SIGTERM on to its child, but `npx` runs the daemon under a shell that
 *   dies of it without passing it on, and an npm killed outright passes nothing on. A daemon whose
 *   parent is gone would keep serving unseen, so it stops as on SIGTERM. Started any other way
 *   (systemd, a container, `nohup`) it keeps running when its parent exits.
 * - The last line: the process exits SHUTDOWN_GRACE_MS after `drain_timeout_ms` whatever is still
 *   pending (a Redis that is away or frozen, a disk that hangs), with exit code 1. Every step of
 *   the shutdown has its own deadline well inside that, so this only fires when something else
 *   holds the process.
 */

/** A stop request ends the process within drain_timeout_ms plus this, ms. */
export const SHUTDOWN_GRACE_MS = 2_000;
/** How much of the grace the exit itself may need (flushing the last log line, exiting), ms. */
const EXIT_MARGIN_MS = 200;
/** How often the parent process is looked for, ms. */
const PARENT_POLL_MS = 500;

export interface StopRequestOptions {
  /** Stop when the parent process exits. Default: when npm started this process. */
  watchParent?: boolean;
  env?: NodeJS.ProcessEnv;
}

/**
 * Calls `stop` once, with the reason, on the first SIGTERM or SIGINT or when the parent exits (see
 * above). Returns a function that removes the handlers.
 */
export function onStopRequest(stop: (reason: string) => void, options: StopRequestOptions = {}): () => void {
  let requested = false;
  const request = (reason: string) => {
    if (requested) return;
    requested = true;
    stop(reason);
  };
  const onTerm = () => request('SIGTERM');
  const onInt = () => request('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  let poll: NodeJS.Timeout | undefined;
  if (options.watchParent ?? startedByNpm(options.env)) {
    const parent = process.ppid;
    // Reparented (to init or a subreaper): the parent is gone.
    poll = setInterval(() => {
      if (process.ppid !== parent) request('parent process exited');
    }, PARENT_POLL_MS);
    poll.unref();
  }
  return () => {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    clearInterval(poll);
  };
}

/** True when npm started this process (a script: `npm start`, `npm run`, or `npx`). */
export function startedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.npm_lifecycle_event);
}

/**
 * Arms the last line of a shutdown that drains for `drainMs`: `expire` runs (and should exit the
 * process) if the process is still there SHUTDOWN_GRACE_MS later, less the time exiting takes. The
 * timer does not keep the process alive.
 */
export function armExitDeadline(drainMs: number, expire: () => void): NodeJS.Timeout {
  const timer = setTimeout(expire, drainMs + SHUTDOWN_GRACE_MS - EXIT_MARGIN_MS);
  timer.unref();
  return timer;
}

/**
 * How long each release after the drain may take (the transport, the tools' connections), ms: the
 * shutdown spends at most drain_timeout_ms plus a few of these, inside SHUTDOWN_GRACE_MS.
 */
export const RELEASE_TIMEOUT_MS = 400;
