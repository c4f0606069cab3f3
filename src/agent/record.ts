/**
 * What an agent writes into its thread and reads back to resume (invariant 1: the thread history
 * is the complete record). Each model turn is one `model-turn` record, from the agent to itself:
 *
 *   <model-turn><task>ID</task><turn>3</turn><text>...</text><calls>[{"id","name","args","key"}]</calls>
 *     <input_tokens/><output_tokens/><thread_tokens/><backend/></model-turn>
 *
 * `task` is the id of the message that gave the task, `thread_tokens` what the agent had used in
 * the thread after this turn (what budget.tokens is checked against). Arguments are redacted
 * exactly as the tool-call records and the audit log redact them (invariant 7); a call whose
 * arguments lost something to redaction is marked, so it is never made again from the record.
 * Tool results and peer replies are the bus's own records, read back here too.
 */
import { createHash } from 'node:crypto';
import { knownSecrets, redact } from '../audit/redact.ts';
import type { MessageView } from '../bus/message.ts';
import type { ToolFailureCode } from '../tools/failure-codes.ts';
import type { ToolResult } from '../tools/types.ts';
import { decodePayload, encodePayload } from '../xml/codec.ts';
import type { JsonSchema } from '../xml/json-schema.ts';
import { DEFAULT_XML_LIMITS, type XmlLimits } from '../xml/limits.ts';
import { parsePayload } from '../xml/parse.ts';
import type { TokenUsage, ToolCallRequest } from './types.ts';

export const TURN_KIND = 'model-turn';

/** Appends one record to a thread's history (the daemon wires the bus's history here). */
export type RecordFn = (
  thread: string,
  entry: { id: string; from: string; to: string; kind: 'model-turn'; payload: string; time: number },
) => void;

/** One call of a recorded turn. */
export interface RecordedCall extends ToolCallRequest {
  /** The call's name within its message (see ToolCaller.call): turn, place and a hash of the call. */
  key: string;
  /** Redaction changed the arguments: the record does not hold the call as made. */
  redacted?: boolean;
}

export interface TurnRecord {
  task: string;
  turn: number;
  text: string;
  calls: RecordedCall[];
  usage: TokenUsage;
  threadTokens: number;
  backend: string;
}

/** Strings are not cut (the record keeps what the call was), as in the tool-call records. */
const HISTORY_REDACT = { maxString: Number.POSITIVE_INFINITY, maxDepth: 64 };
/** Records the runtime wrote itself; bounded all the same. */
const LIMITS: XmlLimits = {
  ...DEFAULT_XML_LIMITS,
  maxBytes: 64 * 1024 * 1024,
  maxTextLength: 64 * 1024 * 1024,
  // As many as 64 MB of empty elements could hold: the runtime's own records are not a flood.
  maxElements: 16 * 1024 * 1024,
};

const TURN_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    task: { type: 'string' },
    turn: { type: 'integer' },
    text: { type: 'string' },
    calls: { type: 'string' },
    input_tokens: { type: 'integer' },
    output_tokens: { type: 'integer' },
    thread_tokens: { type: 'integer' },
    backend: { type: 'string' },
  },
};

/**
 * The name a call gets within its message: the turn, its place in the turn, and a hash of what is
 * called, so a model call made again after a crash that asks for the same call hits the same
 * once-only key, and one that asks for another call does not get the first one's result.
 */
export function callKey(turn: number, index: number, call: ToolCallRequest): string {
  const hash = createHash('sha256')
    .update(`${call.name}\n${JSON.stringify(call.args ?? null)}\n${call.argsError ?? ''}`)
    .digest('hex')
    .slice(0, 12);
  return `turn-${turn}.call-${index}.${hash}`;
}

export function encodeTurn(record: TurnRecord): string {
  const calls = record.calls.map((c) => {
    const call: Record<string, unknown> = { id: c.id, name: c.name, key: c.key };
    // The raw text of unreadable arguments is not kept: nothing could redact it by key.
    if (c.argsError !== undefined) call.argsError = knownSecrets.redact(c.argsError);
    else {
      const args = c.args ?? {};
      const shown = redact(args, HISTORY_REDACT);
      call.args = shown;
      if (JSON.stringify(shown) !== JSON.stringify(args)) call.redacted = true;
    }
    return call;
  });
  return encodePayload(TURN_KIND, {
    task: record.task,
    turn: record.turn,
    text: knownSecrets.redact(record.text),
    calls: JSON.stringify(calls),
    input_tokens: record.usage.input,
    output_tokens: record.usage.output,
    thread_tokens: record.threadTokens,
    backend: record.backend,
  });
}

/** The history entry of `agent`'s turn: from and to the agent, id from the task and the turn. */
export function turnEntry(agent: string, record: TurnRecord): Parameters<RecordFn>[1] {
  return {
    id: `${record.task}.turn-${record.turn}`,
    from: agent,
    to: agent,
    kind: TURN_KIND,
    payload: encodeTurn(record),
    time: Date.now(),
  };
}

/** A `model-turn` record's payload, or undefined when it is not one this version can read. */
export function decodeTurn(payload: string): TurnRecord | undefined {
  try {
    const data = decodePayload(parsePayload(payload, LIMITS).node, TURN_SCHEMA) as Record<string, unknown>;
    const calls = JSON.parse(String(data.calls ?? '[]')) as RecordedCall[];
    if (!Array.isArray(calls) || typeof data.task !== 'string' || typeof data.turn !== 'number')
      return undefined;
    return {
      task: data.task,
      turn: data.turn,
      text: typeof data.text === 'string' ? data.text : '',
      calls: calls.map((c) => ({ ...c, args: c.argsError === undefined ? (c.args ?? {}) : undefined })),
      usage: { input: Number(data.input_tokens ?? 0), output: Number(data.output_tokens ?? 0) },
      threadTokens: Number(data.thread_tokens ?? 0),
      backend: typeof data.backend === 'string' ? data.backend : '',
    };
  } catch {
    return undefined;
  }
}

/** A `tool-result` record's payload back as the dispatcher's result (what the model is shown). */
export function decodeToolResult(payload: string, fallbackTool: string): ToolResult {
  try {
    const data = decodePayload(parsePayload(payload, LIMITS).node, {
      type: 'object',
      properties: { tool: { type: 'string' }, status: { type: 'string' }, result: { type: 'string' } },
    }) as { tool?: string; status?: string; result?: string };
    const tool = data.tool ?? fallbackTool;
    const body: unknown = data.result === undefined || data.result === '' ? null : JSON.parse(data.result);
    if (data.status === 'ok') return { status: 'ok', tool, value: body };
    const error = (body ?? {}) as { code?: unknown; message?: unknown };
    return {
      status: data.status === 'refused' ? 'refused' : 'error',
      tool,
      error: {
        ...(error as object),
        code: String(error.code ?? 'Unknown'),
        message: String(error.message ?? ''),
      },
    };
  } catch (error) {
    return {
      status: 'error',
      tool: fallbackTool,
      error: {
        code: 'UnreadableRecord' satisfies ToolFailureCode,
        message: `the recorded result could not be read: ${(error as Error).message}`,
      },
    };
  }
}

/** A payload's fields, decoded without a schema (a peer's reply, a task message). */
export function decodeLoose(payload: string): Record<string, unknown> {
  try {
    return decodePayload(parsePayload(payload, LIMITS).node, {}) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Whether `m` is a model-turn record of `agent` (for `task`, when given). */
export function isTurnOf(m: MessageView, agent: string): boolean {
  return m.kind === TURN_KIND && m.from === agent && m.to === agent;
}
