/**
 * Errors nobody caught, in a daemon that runs other people's listeners and tools. Node's defaults
 * end the process and print the error, unredacted, to stderr: one fire-and-forget bug (a handler
 * that starts work and never awaits it) took every thread in flight and the API down, and printed
 * whatever secret the error quoted.
 *
 * - A promise that rejects with nobody awaiting it: logged (through the logger, whose serializer
 *   and hook redact it), counted in /metrics (organism_unhandled_rejections_total), and survived:
 *   the rejection is that promise's alone.
 * - An exception thrown outside any promise (a timer's callback): the process's state is not known
 *   to be sound after one, so it still ends (exit code 1, as Node's own), a supervisor restarting
 *   it; the error is logged at fatal level the same redacted way first (stdout is synchronous).
 */
import type { Logger } from 'pino';
import { metrics } from '../observability/metrics.ts';

/** Installs both handlers, for the rest of the process's life (its shutdown included). */
export function catchUncaught(logger: Logger): void {
  process.on('unhandledRejection', (reason: unknown) => {
    metrics.unhandledRejections.inc();
    logger.error(
      { err: reason },
      'unhandled rejection: a promise rejected with nobody awaiting it (a listener or tool left it floating); the daemon goes on',
    );
  });
  process.on('uncaughtException', (error: unknown) => {
    logger.fatal(
      { err: error },
      'uncaught exception: the daemon stops (restart it; the journal keeps what was accepted)',
    );
    process.exit(1);
  });
}
