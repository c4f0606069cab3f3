/**
 * While a listener call waits, what happens in its thread reaches the client that called: each
 * message recorded in the thread as a log notification (at a level that says what it is), and as
 * a progress notification when the call gave a progressToken: one step per hop (a message, a tool
 * call, a tool result) and per agent turn. Payloads pass the same redaction as the rest of what
 * MCP clients get (ClientChannel.log redacts known secrets) and are cut at a size a log line needs.
 */
import type { BusApi } from '../../bus/api.ts';
import type { MessageView } from '../../bus/message.ts';
import type { ClientChannel, LoggingLevel } from './client-channel.ts';

/** Longest payload a log notification carries; the thread resource has the whole of it. */
export const NOTICE_PAYLOAD_CHARS = 4_000;

const LEVEL: Record<string, LoggingLevel> = {
  message: 'info',
  response: 'info',
  huh: 'warning',
  'system-error': 'error',
  failure: 'error',
  'tool-call': 'debug',
  'tool-result': 'debug',
  'model-turn': 'debug',
};

/** A tool result that was refused or failed is worth more than debug. */
const TOOL_TROUBLE = /<status>(refused|error)<\/status>/;

function levelOf(m: MessageView): LoggingLevel {
  if (m.kind === 'tool-result' && TOOL_TROUBLE.test(m.payload)) return 'warning';
  return LEVEL[m.kind] ?? 'info';
}

function step(m: MessageView): string {
  if (m.kind === 'model-turn') {
    const turn = /\.turn-(\d+)$/.exec(m.id)?.[1];
    return `${m.from}: model turn${turn ? ` ${turn}` : ''}`;
  }
  return `${m.from} -> ${m.to} (${m.kind})`;
}

/**
 * The channel as what runs in a listener call's thread sees it: the same client, but the call's
 * progress is the thread's (one step per hop, reportThread), so progress a tool in the thread
 * reports goes as a log notification instead; mixed into the call's token, it would make the
 * client's progress go backwards, which MCP forbids.
 */
export function threadChannel(channel: ClientChannel): ClientChannel {
  return {
    offers: channel.offers,
    client: channel.client,
    caller: channel.caller,
    createMessage: (params, signal) => channel.createMessage(params, signal),
    elicit: (params, signal) => channel.elicit(params, signal),
    log: (level, data, logger) => channel.log(level, data, logger),
    progress: (progress, total, message) =>
      channel.log('info', { progress, ...(total === undefined ? {} : { total }), message }, 'progress'),
  };
}

/**
 * Tells `channel` about every message of `thread` from now on (and those already recorded, so the
 * first hop is not missed); returns the function that stops it.
 */
export function reportThread(
  bus: Pick<BusApi, 'watch' | 'thread'>,
  thread: string,
  channel: ClientChannel,
): () => void {
  const seen = new Set<string>();
  let hops = 0;
  const tell = (m: MessageView) => {
    if (seen.has(m.id)) return;
    seen.add(m.id);
    hops++;
    const payload =
      m.payload.length > NOTICE_PAYLOAD_CHARS
        ? `${m.payload.slice(0, NOTICE_PAYLOAD_CHARS)}… (${m.payload.length} characters; read organism://threads/${thread})`
        : m.payload;
    channel.log(levelOf(m), { thread, id: m.id, kind: m.kind, from: m.from, to: m.to, payload }, 'organism');
    channel.progress(hops, undefined, step(m));
  };
  const stop = bus.watch(thread, { onMessage: tell });
  for (const m of bus.thread(thread)?.messages ?? []) tell(m);
  return stop;
}
