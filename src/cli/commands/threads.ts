/** `organism threads [ID]`: list a running daemon's threads, or print one thread's messages. */
import type { ThreadPage, ThreadView } from '../../bus/api.ts';
import { UsageError } from '../../errors.ts';
import { CLIENT_HELP } from '../../server/client.ts';
import { parseClientCommand } from '../daemon-client.ts';
import type { CommandIo } from '../io.ts';
import { misspeltListeners } from '../listener-names.ts';

export const summary =
  'list the threads of a running daemon (filters: --status, --listener, --since), or show one';

const HELP = `usage: organism threads [--status active|idle|stopped] [--listener NAME] [--since TIME]
                        [--limit N] [--cursor C] [--json] [--url URL] [--config FILE]
       organism threads ID [--json]

Without ID: the threads the daemon keeps, most recently active first, a page at a time (--cursor
takes the "next" of the previous page). With ID (or a unique prefix of 8+ characters, as the
dashboard and 'organism tail' show): that thread's messages in order, as 'from -> to [kind] payload'
lines. History survives restarts, so old threads answer too.

options:
      --status S        active, idle or stopped
      --listener NAME   threads NAME sent or received a message in
      --since TIME      threads active at or after TIME (ISO time or epoch ms)
  -n, --limit N         threads per page, 1..1000 (default 50)
      --cursor C        continue from an earlier page
      --json            print the API's JSON
${CLIENT_HELP}
  -h, --help            show this help

examples:
  npx organism threads --status active
  npx organism threads 3f2a9c1d          # one thread's messages (an id or a unique prefix)`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const args = parseClientCommand(argv, io, HELP, {
    status: { type: 'string' },
    listener: { type: 'string' },
    since: { type: 'string' },
    limit: { type: 'string', short: 'n' },
    cursor: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (!args) return 0;
  const { values, positionals } = args;
  if (positionals.length > 1) throw new UsageError('give at most one thread id');
  if (values.status !== undefined && !['active', 'idle', 'stopped'].includes(values.status))
    throw new UsageError(`--status must be active, idle or stopped, not '${values.status}'`);
  if (values.limit !== undefined && !/^\d+$/.test(values.limit))
    throw new UsageError(`--limit must be a whole number, not '${values.limit}'`);
  const client = await args.connect();

  if (positionals.length === 1) {
    const view = await client.get<ThreadView>(`/api/v1/threads/${encodeURIComponent(positionals[0]!)}`);
    if (values.json) {
      io.out(JSON.stringify(view, null, 2));
      return 0;
    }
    io.out(
      `thread ${view.thread} (${view.status}, created ${view.created}, ${view.messages.length} messages)`,
    );
    for (const m of view.messages) io.out(`${m.from} -> ${m.to} [${m.kind}] ${m.payload}`);
    return 0;
  }

  const page = await client.get<ThreadPage>('/api/v1/threads', {
    status: values.status,
    listener: values.listener,
    since: values.since,
    limit: values.limit ?? 50,
    cursor: values.cursor,
  });
  if (values.json) {
    io.out(JSON.stringify(page, null, 2));
    return 0;
  }
  if (page.threads.length === 0) {
    io.out('no threads match');
    if (values.listener !== undefined)
      for (const note of await misspeltListeners(client, [values.listener]))
        io.err(`organism threads: ${note}`);
    return 0;
  }
  io.out(
    `${'THREAD'.padEnd(36)}  ${'STATUS'.padEnd(7)}  ${'MSGS'.padStart(5)}  ${'UPDATED'.padEnd(24)}  PARTICIPANTS`,
  );
  for (const t of page.threads) {
    io.out(
      `${t.thread.padEnd(36)}  ${t.status.padEnd(7)}  ${String(t.messages).padStart(5)}  ${t.updated.padEnd(24)}  ${t.participants.join(', ')}`,
    );
  }
  io.out(`${page.threads.length} of ${page.total}${page.next ? `; more with --cursor ${page.next}` : ''}`);
  return 0;
}
