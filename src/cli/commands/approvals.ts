/**
 * `organism approvals [list]`, `organism approvals approve|deny ID [--reason TEXT]`: the tool calls
 * of a running daemon waiting for a person (GET /api/v1/approvals, POST .../approve|deny).
 * Exit codes: 0 done, 1 the daemon refused or could not be reached, 2 a usage mistake.
 */
import { UsageError } from '../../errors.ts';
import { ApiCallError, CLIENT_HELP } from '../../server/client.ts';
import type { Approval } from '../../tools/approval/types.ts';
import { approvalLine } from '../../tools/approval/view.ts';
import { parseClientCommand } from '../daemon-client.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'list the tool calls waiting for approval, approve or deny one';

const HELP = `usage: organism approvals [list] [--json] [options]
       organism approvals approve|deny ID [--reason TEXT] [--json] [options]

Lists the tool calls of the running daemon that wait for a person's approval (tool_config
'approval'), or decides one. An approved call runs; a denied one answers its caller with
ApprovalDenied and the reason. Listing needs a viewer token; deciding an operator token, or an
admin one where the listener's tool_config says approval_role: admin.

options:
      --reason TEXT     why (recorded in the audit log and the thread)
      --json            print the API's JSON answer
${CLIENT_HELP}
  -h, --help            show this help

examples:
  npx organism approvals
  npx organism approvals approve 3f2a9c1d --reason "checked the recipient"
  npx organism approvals deny 3f2a9c1d --reason "wrong customer"`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  let args: ReturnType<typeof parseClientCommand<typeof OPTIONS>>;
  try {
    args = parseClientCommand(argv, io, HELP, OPTIONS);
    if (!args) return 0;
    checkUsage(args.positionals, args.values.reason);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`organism approvals: ${error.message}`);
    io.err(`${HELP.split('\n')[0]} ('organism approvals --help' for more)`);
    return 2;
  }
  const [action = 'list', id = ''] = args.positionals;
  const json = args.values.json === true;
  const client = await args.connect();
  try {
    if (action === 'list') {
      const { approvals } = await client.get<{ approvals: Approval[] }>('/api/v1/approvals');
      if (json) io.out(JSON.stringify({ approvals }, null, 2));
      else if (approvals.length === 0) io.out('no tool call is waiting for approval');
      else for (const a of approvals) io.out(approvalLine(a));
      return 0;
    }
    const reason = args.values.reason;
    const decided = await client.post<Approval>(
      `/api/v1/approvals/${encodeURIComponent(id)}/${action}`,
      reason === undefined ? {} : { reason },
    );
    if (json) io.out(JSON.stringify(decided, null, 2));
    else
      io.out(
        `${decided.id}: ${decided.state} by ${decided.decided_by}${decided.reason ? ` (${decided.reason})` : ''}`,
      );
    return 0;
  } catch (error) {
    if (!(error instanceof ApiCallError)) throw error;
    io.err(`organism approvals: ${error.message}`);
    return 1;
  }
}

const OPTIONS = { json: { type: 'boolean' }, reason: { type: 'string' } } as const;

function checkUsage(positionals: string[], reason: string | undefined): void {
  const [action, id, extra] = positionals;
  if (action === undefined || action === 'list') {
    if (id !== undefined) throw new UsageError(`'list' takes no argument, not '${id}'`);
    if (reason !== undefined) throw new UsageError('--reason goes with approve or deny');
    return;
  }
  if (action !== 'approve' && action !== 'deny')
    throw new UsageError(`unknown action '${action}'; use list, approve or deny`);
  if (id === undefined) throw new UsageError(`give the id of the approval to ${action}`);
  if (extra !== undefined) throw new UsageError(`give one id, not '${id}' and '${extra}'`);
}
