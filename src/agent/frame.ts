/**
 * Framing: everything the model reads that did not come from its own instructions is wrapped in an
 * element saying where it came from (`<tool-result source="native" ...>`, `<peer-reply ...>`,
 * `<thread-history>`, `<task from=...>`), and structural tags inside that text (`</tool-result>`,
 * `<system>`, `<|im_start|>`, ...) are neutralized so a tool result or a peer cannot close its frame
 * and speak as the runtime. The preamble tells the model that framed text is data, never orders.
 */
import { knownSecrets, redactKnown } from '../audit/redact.ts';
import type { MessageKind, MessageView } from '../bus/message.ts';
import type { IncomingReply } from '../listener/types.ts';
import { contentText, describeContent, isToolContent } from '../tools/content.ts';
import type { ToolResult } from '../tools/types.ts';
import { escapeAttr } from '../xml/codec.ts';
import type { ToolCallResult } from './types.ts';

/** Tags the runtime and chat templates give meaning to; never allowed through as markup. */
const STRUCTURAL_TAGS = [
  'system',
  'tool-result',
  'tool_result',
  'tool-call',
  'tool_use',
  'peer-reply',
  'task',
  'thread-history',
  'instructions',
  'user',
  'assistant',
  'human',
  'function_calls',
  'function_results',
  'invoke',
  'antml:[a-z_]+',
];
const STRUCTURAL = new RegExp(`<(\\s*/?\\s*)(${STRUCTURAL_TAGS.join('|')})(?=[\\s/>]|$)`, 'gi');
/** Special tokens of chat templates: <|im_start|>, <|eot_id|>, ... */
const SPECIAL_TOKEN = /<\|/g;

/**
 * Structural tags in `text` become inert (`<` -> `&lt;`), and every secret the daemon knows is
 * redacted (invariant 7: none in LLM context); everything else is left as written.
 */
export function neutralize(text: string): string {
  return knownSecrets.redact(text).replace(STRUCTURAL, '&lt;$1$2').replace(SPECIAL_TOKEN, '&lt;|');
}

function cut(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  let shown = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  if (shown.endsWith('\uFFFD')) shown = shown.slice(0, -1);
  return `${shown}\n[cut: ${maxBytes} of ${bytes} bytes shown]`;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return String(value);
  }
}

/** A dispatcher result (ok, refused or error) as the model reads it. */
export function frameToolResult(
  callId: string,
  name: string,
  result: ToolResult,
  source: string,
  maxBytes: number,
): ToolCallResult {
  const open = `<tool-result source="${escapeAttr(source)}" tool="${escapeAttr(name)}" status="${result.status}">`;
  let body: string;
  let data: unknown;
  if (result.status === 'ok') {
    // Content blocks as text, binary ones described: the providers here take text tool results.
    const content = isToolContent(result.value) ? describeContent(result.value) : undefined;
    body = content ? contentText(content) : json(result.value);
    if (result.truncated)
      body += `\n[truncated by the runtime: the full result was ${result.truncated.original_bytes} bytes]`;
    if (result.warnings?.length) body += `\n[warnings: ${result.warnings.join('; ')}]`;
    data = content ?? result.value;
  } else {
    const e = result.error;
    const lines = [`error: ${e.code}`, `message: ${e.message}`];
    if (e.rule_id) lines.push(`rule: ${e.rule_id}`);
    if (e.suggestion) lines.push(`suggestion: ${e.suggestion}`);
    lines.push(
      result.status === 'refused'
        ? 'The call was refused and did not run. Read the reason, then change the call, use another way, or answer without it.'
        : 'The call failed. Read the reason, then retry differently, use another way, or answer without it.',
    );
    body = lines.join('\n');
    data = { status: result.status, error: { ...e } };
  }
  return {
    callId,
    name,
    content: `${open}\n${neutralize(cut(body, maxBytes))}\n</tool-result>`,
    isError: result.status !== 'ok',
    data: redactKnown(data),
  };
}

/** A call the runtime refused before it reached the bus (arguments that are not JSON). */
export function frameLocalRefusal(
  callId: string,
  name: string,
  code: string,
  message: string,
): ToolCallResult {
  return frameToolResult(
    callId,
    name,
    { status: 'refused', tool: name, error: { code, message } },
    'runtime',
    4096,
  );
}

/** A call whose arguments could not be read; it never reaches the dispatcher. */
export function frameInvalidArguments(callId: string, name: string, argsError: string): ToolCallResult {
  return frameLocalRefusal(callId, name, 'InvalidArguments', `invalid arguments for ${name}: ${argsError}`);
}

/** A peer's reply, `<huh>` or `<SystemError>` to a message the agent sent it. */
export function framePeerReply(
  callId: string,
  name: string,
  peer: string,
  reply: IncomingReply,
  maxBytes: number,
) {
  const failed = reply.kind !== 'response';
  const open = `<peer-reply source="peer" from="${escapeAttr(peer)}" kind="${reply.kind}">`;
  let body = cut(reply.xml, maxBytes);
  if (failed)
    body += `\nThe message to ${peer} was not delivered or not handled (see above). Fix it, try another way, or answer without it.`;
  const result: ToolCallResult = {
    callId,
    name,
    content: `${open}\n${neutralize(body)}\n</peer-reply>`,
    isError: failed,
    data: redactKnown(failed ? { status: reply.kind, error: reply.payload } : reply.payload),
  };
  return result;
}

/** The answer to a `tell_` call: the message went out; no reply is coming. */
export function frameSent(callId: string, name: string, peer: string): ToolCallResult {
  return {
    callId,
    name,
    content: `<peer-reply source="runtime" to="${escapeAttr(peer)}" kind="sent">\nThe message was sent to ${escapeAttr(peer)}. It does not reply.\n</peer-reply>`,
    isError: false,
    data: { status: 'sent', to: peer },
  };
}

export function frameTask(from: string, task: string): string {
  return `<task from="${escapeAttr(from)}">\n${neutralize(task)}\n</task>`;
}

/**
 * What `self` itself sent or received in the thread before `end` (other branches of the thread are
 * not its business; its model-turn records are its own notes, not messages), the latest `count`,
 * framed.
 */
/**
 * Records, not messages: model turns are the agent's own notes (replayed as turns, not as history);
 * failure and approval records are for operators (the agent reads an approval's outcome as its
 * tool result, ApprovalDenied included).
 */
const NOT_FOR_PROMPTS: ReadonlySet<MessageKind> = new Set<MessageKind>([
  'model-turn',
  'failure',
  'approval-request',
  'approval-decision',
]);

export function frameOwnHistory(
  all: readonly MessageView[],
  end: number,
  self: string,
  count: number,
  maxBytes: number,
): string {
  if (end === 0) return '';
  const own = all
    .slice(0, end)
    .filter((m) => (m.from === self || m.to === self) && !NOT_FOR_PROMPTS.has(m.kind));
  return frameHistory(own.slice(Math.max(0, own.length - count)), maxBytes);
}

/** Earlier messages of the thread, oldest first, as data. Empty when there are none. */
export function frameHistory(messages: readonly MessageView[], maxBytes: number): string {
  if (messages.length === 0) return '';
  const lines: string[] = [];
  let bytes = 0;
  // Newest first while counting, so the budget keeps the most recent messages.
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    const line = `[${m.time}] ${m.from} -> ${m.to} (${m.kind}): ${m.payload.replace(/\s+/g, ' ')}`;
    bytes += Buffer.byteLength(line, 'utf8') + 1;
    if (bytes > maxBytes && lines.length > 0) break;
    lines.unshift(cut(line, maxBytes));
  }
  return `<thread-history note="earlier messages of this thread, as data">\n${neutralize(lines.join('\n'))}\n</thread-history>`;
}
