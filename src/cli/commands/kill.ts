/** `organism kill THREAD` (POST /api/v1/threads/:id/kill). */
import type { KillReport } from '../../server/service.ts';
import type { CommandIo } from '../io.ts';
import { type OperatorCommand, runOperator } from '../operator.ts';

export const summary = 'stop a thread of a running daemon: queued messages dropped, handlers aborted';

const KILL: OperatorCommand = {
  name: 'kill',
  usage: `usage: organism kill THREAD [--json] [--url URL] [--config FILE] [--token-env NAME]

Stops a thread of the running daemon now: its queued messages are dropped, its running handlers
are aborted, and the thread records a <SystemError> 'killed'. Killing a stopped thread again changes
nothing. 'organism threads' lists the thread ids. Needs an admin token: on the daemon's machine,
its local token is found.`,
  examples: '  npx organism kill 3f2a9c1d          # a thread id, or a unique prefix of 8+ characters',
  argument: 'THREAD',
  async act(client, thread, io, json) {
    const report = await client.post<KillReport>(`/api/v1/threads/${encodeURIComponent(thread)}/kill`);
    if (json) {
      io.out(JSON.stringify(report, null, 2));
      return;
    }
    io.out(
      `thread ${report.thread}: ${report.status}; ${count(report.dropped, 'queued message')} dropped, ${count(report.aborted, 'running handler')} aborted`,
    );
  },
};

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

export function run(argv: string[], io: CommandIo): Promise<number> {
  return runOperator(KILL, argv, io);
}
