/** `organism reload` (POST /api/v1/organism/reload, the same as SIGHUP). */
import type { ReloadReport } from '../../server/service.ts';
import type { CommandIo } from '../io.ts';
import { type OperatorCommand, runOperator } from '../operator.ts';

export const summary = 'make a running daemon read organism.yaml again (all or nothing)';

const RELOAD: OperatorCommand = {
  name: 'reload',
  usage: `usage: organism reload [--json] [--url URL] [--config FILE] [--token-env NAME]

Makes the running daemon read its organism.yaml (and the .env beside it) again, as SIGHUP does.
All or nothing: a file with problems is refused with every problem listed (file:line:column), and
the running organism stays as it was (exit 1). Settings that only a restart applies (server.port...)
are named. Needs an admin token: on the daemon's machine, its local token is found.`,
  examples: '  npx organism reload\n  npx organism reload --json',
  async act(client, _argument, io, json) {
    const report = await client.post<ReloadReport>('/api/v1/organism/reload');
    if (json) {
      io.out(JSON.stringify(report, null, 2));
      return;
    }
    io.out(`reloaded (by ${report.by})`);
    const lines: Array<[string, string[]]> = [
      ['added', report.added],
      ['removed', report.removed],
      ['replaced', report.replaced],
      ['unchanged', report.unchanged],
      ['needs a restart', report.restart_required],
    ];
    for (const [label, names] of lines) if (names.length > 0) io.out(`  ${label}: ${names.join(', ')}`);
  },
};

export function run(argv: string[], io: CommandIo): Promise<number> {
  return runOperator(RELOAD, argv, io);
}
