import type { Daemon } from '../../daemon.ts';
import { ConfigError, UsageError } from '../../errors.ts';
import { signedInLink } from '../../server/local-token.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'run the organism: the bus and its HTTP API on 127.0.0.1';

const HELP = `usage: organism run [--config FILE] [--port N] [--host ADDR]

Starts the daemon. Everything it says goes to stdout: pretty lines on a terminal, JSON lines
otherwise (a pipe, a file, journald), the "listening on" line included, which names the file of
the local API token (<data_dir>/api-token); on a terminal a signed-in dashboard link follows it
('organism dashboard' prints it too). SIGINT or SIGTERM drains
in-flight messages (bus.drain_timeout_ms at most) and exits 0, within bus.drain_timeout_ms + 2 s
whatever Redis does. Started by npm (npm start, npx organism run), it also stops when npm does.
It exits 1 without starting on a bad organism.yaml (every problem as file:line:column, as
'organism validate' prints them) and on a port in use (one line).

options:
  -c, --config FILE   organism.yaml to run (default ./organism.yaml)
  -p, --port N        listen on port N instead of server.port (0 picks a free port)
      --host ADDR     listen on ADDR instead of server.host (beyond loopback only with auth.tokens)
  -h, --help          show this help

examples:
  npx organism run                          # ./organism.yaml, on server.host:server.port
  npx organism run --port 8080
  npx organism run --config deploy/organism.yaml`;

/** How `organism dev` runs the daemon: this command's start and stop, with its help and its watcher. */
export interface RunMode {
  help: string;
  /** Started once the daemon listens; closed first when it stops. */
  started?(daemon: Daemon, configPath: string): Promise<{ close(): Promise<void> }>;
}

export async function run(argv: string[], io: CommandIo, mode: RunMode = { help: HELP }): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { ...CONFIG_OPTION, port: { type: 'string', short: 'p' }, host: { type: 'string' } },
    false,
  );
  if (values.help) {
    io.out(mode.help);
    return 0;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be 0..65535, got '${values.port}'`);
  }
  const { armExitDeadline, onStopRequest } = await import('../../daemon/shutdown.ts');
  // Signals are taken before the daemon starts: one that arrives while it starts (or right after it
  // says it listens) stops it once it is up, instead of killing it mid-way with nothing drained.
  let requested: string | undefined;
  let stop: ((signal: string) => void) | undefined;
  onStopRequest((signal) => {
    requested = signal;
    stop?.(signal);
  });
  const { startDaemon } = await import('../../daemon.ts');
  let daemon: Daemon;
  try {
    daemon = await startDaemon({ configPath: values.config, port, host: values.host });
  } catch (error) {
    // Every problem of organism.yaml as file:line:column, as `organism validate` prints them (the
    // reporter is imported only then: a daemon that starts never needs it).
    if (error instanceof ConfigError) {
      const { reportConfigError } = await import('../report.ts');
      return reportConfigError(error, values.config, io);
    }
    throw error;
  }
  // This process is the daemon's: what nobody caught is logged redacted, not printed raw by Node,
  // and a stray rejection no longer ends it (daemon/unhandled.ts). Not in startDaemon: a program
  // that embeds the daemon keeps its own process-wide handlers.
  const { catchUncaught } = await import('../../daemon/unhandled.ts');
  catchUncaught(daemon.logger);
  // A log record like every other line on stdout (JSON when piped: `jq` reads all of it). Logged at
  // info whatever organism.log_level says (warn, error, even silent): where the daemon listens is
  // what a service manager, a script or a person needs from it first.
  daemon.logger.child({}, { level: 'info' }).info(
    // `auth`: whether organism.yaml has tokens (false: the local token is the only credential).
    {
      url: daemon.url,
      token_file: daemon.localToken.path,
      auth: (daemon.config.auth?.tokens?.length ?? 0) > 0,
    },
    `organism '${daemon.config.organism.name}' listening on ${daemon.url}`,
  );
  // The signed-in link is a credential: for the person at this terminal only, never in the log
  // (a pipe, a file or journald gets the command that prints it instead).
  if (daemon.config.server.dashboard !== false) {
    if (process.stdout.isTTY === true) {
      process.stdout.write(
        `\n  Dashboard, signed in (keep this link to yourself): ${signedInLink(daemon.url, daemon.localToken.token)}\n\n`,
      );
    } else {
      daemon.logger.info(
        { url: daemon.url },
        "dashboard: 'organism dashboard' prints a signed-in link (API token in the token_file above)",
      );
    }
  }
  const extra = await mode.started?.(daemon, values.config);
  await new Promise<void>((resolve) => {
    stop = (signal) => {
      const drainMs = daemon.config.bus.drain_timeout_ms;
      daemon.logger.info({ signal, drain_timeout_ms: drainMs }, 'shutting down');
      // The last line: out within drain_timeout_ms + 2 s, whatever still holds the process.
      armExitDeadline(drainMs, () => {
        daemon.logger.error(
          { drain_timeout_ms: drainMs },
          'shutdown did not finish in time: exiting; unacknowledged work is left for redelivery',
        );
        process.exit(1);
      });
      (extra?.close() ?? Promise.resolve())
        .catch(() => {})
        .then(() => daemon.close(drainMs))
        .then(
          () => resolve(),
          () => resolve(),
        );
    };
    if (requested !== undefined) stop(requested);
  });
  // Stopped. A handler that ignores its abort signal (a timer, a call that takes no signal) must
  // not keep the process alive: once nothing but such leftovers holds it, it ends.
  setTimeout(() => process.exit(), 100).unref();
  return 0;
}
