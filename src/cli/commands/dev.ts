/** `organism dev`: `organism run` plus a reload on every save (src/dev). */
import type { CommandIo } from '../io.ts';
import { run as runDaemon } from './run.ts';

export const summary =
  'run the organism and reload it on every save of its files (organism.yaml, listeners, tools)';

const HELP = `usage: organism dev [--config FILE] [--port N] [--host ADDR]

Runs the daemon as 'organism run' does, and reloads it whenever organism.yaml, the .env beside it,
a listener's module, a tool module (tool_modules) or a local file any of them imports is saved.
Each reload says what changed (listeners added, replaced, removed) or lists every problem that
refused it as file:line:column, as 'organism validate' does; a refused version never runs, the one
before keeps serving, and the next save tries again. A reload is the same all-or-nothing hot
reload as 'organism reload' (settings only a restart applies, such as server.port, are named).
Logs are pretty lines on a terminal, JSON lines otherwise. For development: a service runs
'organism run'.

options:
  -c, --config FILE   organism.yaml to run and watch (default ./organism.yaml)
  -p, --port N        listen on port N instead of server.port (0 picks a free port)
      --host ADDR     listen on ADDR instead of server.host (beyond loopback only with auth.tokens)
  -h, --help          show this help

examples:
  npx organism dev                          # what 'npm run dev' runs in an 'organism init' project
  npx organism dev --port 8080`;

export function run(argv: string[], io: CommandIo): Promise<number> {
  return runDaemon(argv, io, {
    help: HELP,
    async started(daemon, configPath) {
      const { startDevReload } = await import('../../dev/reload-on-save.ts');
      const { keepCompilerWarm } = await import('../../listener/typescript-module.ts');
      keepCompilerWarm();
      return startDevReload({
        configPath,
        config: () => daemon.config,
        env: process.env,
        reload: (by) => daemon.reload(by),
        logger: daemon.logger,
      });
    },
  });
}
