/**
 * MONITOR on the real redis-server, for tests that check which commands a daemon sent. ioredis
 * stops treating replies as monitor lines once the connection is disconnected, so a line already in
 * the socket's buffer at that moment becomes a reply nobody asked for and an 'error' event ("Command
 * queue state error"), which without a listener is thrown from the socket's data handler and fails
 * whichever test is running. Errors after stop() are those lines; errors before it fail stop().
 */
import type { Redis } from 'ioredis';

export interface CommandMonitor {
  /** Ends the monitor; throws the first error it had while running, if any. */
  stop(): void;
}

export async function monitorCommands(
  client: Redis,
  seen: (args: string[], source: string) => void,
): Promise<CommandMonitor> {
  const monitor = await client.monitor();
  let stopped = false;
  const errors: Error[] = [];
  monitor.on('error', (e: Error) => {
    if (!stopped) errors.push(e);
  });
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (!stopped) seen(args, source);
  });
  return {
    stop() {
      stopped = true;
      monitor.disconnect();
      if (errors.length > 0) throw errors[0];
    },
  };
}
