/**
 * A promise that rejects with nobody awaiting it: Node's default (since 15) ends the process and
 * prints the error, unredacted, to stderr. In a daemon that runs other people's listeners and
 * tools, one fire-and-forget bug (a handler that starts work and never awaits it) took every thread
 * in flight and the API down, and printed whatever secret the error quoted. The running daemon logs
 * it instead, through the logger (whose serializer and hook redact it), counts it in /metrics
 * (organism_unhandled_rejections_total), and goes on: the rejection is that promise's alone.
 *
 * An exception thrown outside any promise (uncaughtException) keeps Node's default: after one, the
 * process's state is not known to be sound, and a supervisor's restart is the safe answer.
 */
import type { Logger } from 'pino';
import { metrics } from '../observability/metrics.ts';

/** Installs the handler; the function returned removes it (at close). */
export function logUnhandledRejections(logger: Logger): () => void {
  const onRejection = (reason: unknown) => {
    metrics.unhandledRejections.inc();
    logger.error(
      { err: reason },
      'unhandled rejection: a promise rejected with nobody awaiting it (a listener or tool left it floating); the daemon goes on',
    );
  };
  process.on('unhandledRejection', onRejection);
  return () => process.off('unhandledRejection', onRejection);
}
