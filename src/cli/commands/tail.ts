/** `organism tail`: the live stream of a running daemon (WebSocket /api/v1/stream). */

import type { ThreadView } from '../../bus/api.ts';
import { UsageError } from '../../errors.ts';
import { CLIENT_HELP, type DaemonClient } from '../../server/client.ts';
import { parseClientCommand } from '../daemon-client.ts';
import type { CommandIo } from '../io.ts';
import { misspeltListeners } from '../listener-names.ts';

export const summary = 'follow a running daemon live: messages, tool calls with verdicts, lifecycle events';

const HELP = `usage: organism tail [--listener A,B] [--thread ID,...] [--kind K,...] [--count N] [--json]
                     [--url URL] [--config FILE] [--token-env NAME]

Prints events as they happen until interrupted (Ctrl-C), or until --count events were printed:
  <time> <thread> from -> to [kind] payload            a message recorded in a thread
  <time> <thread> tool listener -> tool: verdict, outcome   a tool call, judged and done
  <time> lifecycle event [listener|thread] [by]          threads starting/idle/stopped, pauses, reloads
  <time> <thread> approval event id listener -> tool   a call waiting for a person, or decided

options:
      --listener A,B    only events that involve these listeners (or tools)
      --thread ID,...   only these threads (each id or a unique prefix of 8+ characters)
      --kind K,...      message, response, huh, system-error, tool-call, tool-result, model-turn,
                        failure (why a handler failed or timed out), approval-request,
                        approval-decision, tool, lifecycle, approval
      --count N         stop after N events
      --json            one JSON event per line, as the stream sends them
${CLIENT_HELP}
  -h, --help            show this help

examples:
  npx organism tail
  npx organism tail --listener hello --kind tool --count 10`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const args = parseClientCommand(argv, io, HELP, {
    listener: { type: 'string' },
    thread: { type: 'string' },
    kind: { type: 'string' },
    count: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (!args) return 0;
  const { values, positionals } = args;
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  if (values.count !== undefined && !/^[1-9]\d*$/.test(values.count))
    throw new UsageError(`--count must be a positive whole number, not '${values.count}'`);
  const limit = values.count === undefined ? Number.POSITIVE_INFINITY : Number(values.count);
  const client = await args.connect();
  if (values.listener !== undefined) {
    const names = values.listener.split(',').map((n) => n.trim());
    // A daemon that refuses this is told below by the stream's own refusal.
    const notes = await misspeltListeners(client, names).catch(() => []);
    for (const note of notes) io.err(`organism tail: ${note}`);
  }
  // The ids tail shows are 8 characters: a prefix names the thread it begins (the API resolves it).
  const threads =
    values.thread === undefined
      ? undefined
      : (await Promise.all(values.thread.split(',').map((id) => wholeThreadId(client, id.trim())))).join(',');
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  let printed = 0;
  try {
    const how = await client.stream(
      { listeners: values.listener, threads, kinds: values.kind },
      (event) => {
        if (event.type === 'hello' || event.type === 'subscribed') return undefined;
        if (event.type === 'error') {
          io.err(`organism tail: ${String(event.message)}`);
          return undefined;
        }
        io.out(values.json ? JSON.stringify(event) : formatEvent(event));
        printed++;
        return printed < limit ? undefined : false;
      },
      controller.signal,
    );
    if (how === 'closed') io.err('organism tail: the daemon closed the stream');
    return 0;
  } finally {
    process.off('SIGINT', stop);
  }
}

/** A whole thread id as given; a shorter one is asked of the daemon (unknown or ambiguous: its error). */
async function wholeThreadId(client: DaemonClient, id: string): Promise<string> {
  if (id.length >= WHOLE_ID_LENGTH) return id;
  return (await client.get<ThreadView>(`/api/v1/threads/${encodeURIComponent(id)}`)).thread;
}

/** A thread id's length (a UUID); anything shorter is taken for a prefix. */
const WHOLE_ID_LENGTH = 36;

export function formatEvent(event: Record<string, unknown>): string {
  const thread = typeof event.thread === 'string' ? event.thread.slice(0, 8) : '';
  if (event.type === 'message') {
    const m = event.message as { from: string; to: string; kind: string; payload: string; time: string };
    return `${m.time} ${thread} ${m.from} -> ${m.to} [${m.kind}] ${m.payload}`;
  }
  if (event.type === 'tool') {
    const verdict = event.verdict ?? 'unjudged';
    const code = event.code ? ` (${String(event.code)})` : '';
    return `${String(event.time)} ${thread} tool ${String(event.listener)} -> ${String(event.tool)}: ${String(verdict)}, ${String(event.outcome)}${code}`;
  }
  if (event.type === 'lifecycle') {
    const subject = event.listener ?? event.thread ?? '';
    const by = event.by ? ` by ${String(event.by)}` : '';
    const detail = event.detail ? ` (${String(event.detail)})` : '';
    return `${String(event.time)} lifecycle ${String(event.event)} ${String(subject)}${by}${detail}`.replace(
      / {2,}/g,
      ' ',
    );
  }
  if (event.type === 'approval') {
    const a = event.approval as { id: string; decided_by: string | null; reason: string | null };
    const by = a.decided_by ? ` by ${a.decided_by}${a.reason ? `: ${a.reason}` : ''}` : '';
    return `${String(event.time)} ${thread} approval ${String(event.event)} ${a.id} ${String(event.listener)} -> ${String(event.tool)}${by}`;
  }
  if (event.type === 'dropped')
    return `(${String(event.count)} events dropped: this terminal reads slower than they come)`;
  return JSON.stringify(event);
}
