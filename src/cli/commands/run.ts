import { UsageError } from '../../errors.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'run the organism: the bus and its HTTP API on 127.0.0.1';

const HELP = `usage: organism run [--config FILE] [--port N] [--host ADDR]

Starts the daemon. Logs are JSON lines on stdout. SIGINT or SIGTERM drains in-flight messages
(bus.drain_timeout_ms at most) and exits 0.`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { ...CONFIG_OPTION, port: { type: 'string', short: 'p' }, host: { type: 'string' } },
    false,
  );
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be 0..65535, got '${values.port}'`);
  }
  const { startDaemon } = await import('../../daemon.ts');
  const daemon = await startDaemon({ configPath: values.config, port, host: values.host });
  io.err(`organism '${daemon.config.organism.name}' listening on ${daemon.url}`);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      daemon.logger.info({ signal }, 'shutting down');
      daemon.close().then(
        () => resolve(),
        () => resolve(),
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  return 0;
}
