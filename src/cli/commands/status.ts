/** `organism status`: what a running daemon is doing (GET /api/v1/organism and /listeners). */
import type { ThreadPage } from '../../bus/api.ts';
import { UsageError } from '../../errors.ts';
import { CLIENT_HELP } from '../../server/client.ts';
import type { OrganismInfo } from '../../server/service.ts';
import { parseClientCommand } from '../daemon-client.ts';
import type { CommandIo } from '../io.ts';

export const summary =
  'show a running daemon: uptime, threads, queues, reloads (the local token, or ORGANISM_TOKEN)';

const HELP = `usage: organism status [--json] [--url URL] [--config FILE] [--token-env NAME]

Asks the running daemon how it is: version, uptime, threads (running now, known to the bus, kept in
history), messages in flight, memory, each listener's queue, paused listeners, reloads. Exits 1 when
the daemon cannot be reached.

options:
      --json            print the answers as JSON
${CLIENT_HELP}
  -h, --help            show this help

examples:
  npx organism status
  npx organism status --json`;

interface ListenerRow {
  name: string;
  tag: string;
  agent: boolean;
  state: { paused: boolean; depth: number; active: number; capacity: number } | null;
}

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const args = parseClientCommand(argv, io, HELP, { json: { type: 'boolean' } });
  if (!args) return 0;
  const { values, positionals } = args;
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const client = await args.connect();
  const info = await client.get<OrganismInfo>('/api/v1/organism');
  const { listeners } = await client.get<{ listeners: ListenerRow[] }>('/api/v1/listeners');
  // `threads.live` counts every thread the bus still knows, idle ones included; running ones are these.
  const running = await client.get<ThreadPage>('/api/v1/threads', { status: 'active', limit: 1 });
  if (values.json) {
    io.out(JSON.stringify({ organism: info, listeners, running_threads: running.total }, null, 2));
    return 0;
  }
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  io.out(
    `organism ${info.name} ${info.version} at ${client.target.url} (pid ${info.pid}, up ${duration(info.uptime_seconds)})`,
  );
  io.out(
    `threads: ${running.total} running, ${info.threads.live} known to the bus, ${info.threads.in_history} kept; messages: ${info.messages.in_flight} in flight, ${info.messages.recorded} recorded`,
  );
  io.out(`memory: ${mb(info.memory.rss_bytes)} resident, ${mb(info.memory.heap_used_bytes)} heap`);
  io.out(
    info.history.persisted
      ? `history: on disk in ${info.history.dir} (${mb(info.history.bytes)}, ${info.history.pending_lines} lines pending)`
      : 'history: in memory only (history.max_bytes is 0)',
  );
  const local = info.auth.local_token ? 'the local token (admin, <data_dir>/api-token)' : '';
  io.out(
    info.auth.enabled
      ? `auth: ${info.auth.tokens.map((t) => `${t.name} (${t.role})`).join(', ')}${local ? `, ${local}` : ''}`
      : `auth: ${local || 'none'} (no auth.tokens: loopback only)`,
  );
  io.out(
    `reloads: ${info.reloads.applied} applied, ${info.reloads.refused} refused${info.reloads.last ? `, last ${info.reloads.last}` : ''}; stream clients: ${info.stream_clients}`,
  );
  io.out('');
  const width = Math.max(8, ...listeners.map((l) => l.name.length));
  io.out(`${'LISTENER'.padEnd(width)}  ${'QUEUE'.padEnd(11)}  RUNNING  STATE`);
  for (const l of listeners) {
    const queue = l.state ? `${l.state.depth}/${l.state.capacity}` : '-';
    const state = l.state?.paused ? 'paused' : 'running';
    io.out(
      `${l.name.padEnd(width)}  ${queue.padEnd(11)}  ${String(l.state?.active ?? 0).padEnd(7)}  ${state}${l.agent ? ' (agent)' : ''}`,
    );
  }
  return 0;
}

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}
