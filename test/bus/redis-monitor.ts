/**
 * MONITOR on the real redis-server, for tests that check which commands a daemon sent. ioredis
 * stops treating replies as monitor lines once the connection is disconnected, so a line already in
 * the socket's buffer at that moment becomes a reply nobody asked for and an 'error' event ("Command
 * queue state error"), which without a listener is thrown from the socket's data handler and fails
 * whichever test is running. Errors after stop() are those lines; errors before it fail stop().
 *
 * The same happens at the start: ioredis switches the connection to monitoring a microtask after
 * MONITOR's OK, so lines Redis sent in the same read as that OK (a busy shared server) are taken for
 * replies too. `client.monitor()` rejects with that error; here the connection is made as it makes
 * it, with the listener on from the first byte, and those lines are let go: they came before this
 * function returns, so nothing a test does afterwards is among them.
 */
import type { Redis } from 'ioredis';

export interface CommandMonitor {
  /** Ends the monitor; throws the first error it had while running, if any. */
  stop(): void;
}

const STRAY_REPLY = /Command queue state error/;

export async function monitorCommands(
  client: Redis,
  seen: (args: string[], source: string) => void,
): Promise<CommandMonitor> {
  // As Redis.monitor() makes it (ioredis 6).
  const monitor = client.duplicate({ monitor: true, lazyConnect: false, himportFieldsets: undefined });
  let monitoring = false;
  let stopped = false;
  let failed: ((error: Error) => void) | undefined;
  const errors: Error[] = [];
  monitor.on('error', (e: Error) => {
    if (!monitoring) {
      if (!STRAY_REPLY.test(e.message)) failed?.(e);
      return;
    }
    if (!stopped) errors.push(e);
  });
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (monitoring && !stopped) seen(args, source);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      failed = reject;
      monitor.once('monitoring', () => {
        monitoring = true;
        resolve();
      });
    });
  } catch (error) {
    monitor.disconnect();
    throw error;
  }
  return {
    stop() {
      stopped = true;
      monitor.disconnect();
      if (errors.length > 0) throw errors[0];
    },
  };
}
