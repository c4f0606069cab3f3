/**
 * Tool calls as messages (invariant 1): a handler's `ctx.tools.call` becomes a `tool-call` and a
 * `tool-result` in the thread history, each counted as a hop, with the dispatcher (ToolPort) in
 * between. The bus never judges a call itself; every check is the dispatcher's. The call's
 * arguments are recorded redacted as the audit records them; the tool gets them as given.
 */
import { randomUUID } from 'node:crypto';
import { knownSecrets, redact } from '../audit/redact.ts';
import type { BudgetError } from '../errors.ts';
import type { TraceScope } from '../telemetry/types.ts';
import { describeContent, isToolContent } from '../tools/content.ts';
import type { ToolFailureCode } from '../tools/failure-codes.ts';
import type { ToolResult } from '../tools/types.ts';
import { encodePayload } from '../xml/codec.ts';
import type { BusContext } from './bus-context.ts';
import type { RuntimeListener } from './listeners.ts';
import { safeJson } from './payload-text.ts';
import type { Frame, ThreadState } from './threads.ts';

export class ToolCalls {
  constructor(private readonly bus: BusContext) {}

  /** A tool call is two messages in the thread: the call and the result, both counted as hops. */
  async call(
    caller: RuntimeListener,
    thread: ThreadState,
    frame: Frame,
    tool: string,
    args: unknown,
    givenId?: string,
    trace?: TraceScope,
    /** Told while the call waits for a person's approval, so the handler's clock stands still. */
    waiting?: (on: boolean) => void,
  ): Promise<ToolResult> {
    const bus = this.bus;
    const callId = givenId ?? randomUUID();
    const refuse = (code: ToolFailureCode | BudgetError['code'], message: string): ToolResult => ({
      status: 'refused',
      tool,
      error: { code, message },
    });
    const budget = bus.threads.chargeHop(thread, frame.depth);
    if (!budget.ok) return refuse('bus.budget', `thread ${budget.what} budget of ${budget.limit} exhausted`);
    bus.record(thread.id, callId, caller.name, tool, 'tool-call', toolCallXml(tool, args));
    const result = bus.options.tools
      ? await bus.options.tools.call({
          tool,
          args,
          listener: caller.name,
          thread: thread.id,
          scope: thread.scope,
          callId,
          ...(trace ? { trace } : {}),
          ...(waiting ? { waiting } : {}),
        })
      : refuse('ToolsUnavailable', 'this organism has no tool runtime');
    bus.threads.chargeHop(thread, frame.depth);
    // The result's id names its call, so an agent resuming from the history can pair them.
    bus.record(thread.id, `${callId}.result`, tool, caller.name, 'tool-result', toolResultXml(result));
    return result;
  }
}

/** Strings are not cut here (the history keeps what the call was), unlike the audit's 2 KB lines. */
const HISTORY_REDACT = { maxString: Number.POSITIVE_INFINITY, maxDepth: 64 };

/** The arguments redacted exactly as the audit records them (invariant 7: none in thread history). */
export function toolCallXml(tool: string, args: unknown): string {
  return encodePayload('tool-call', { tool, args: safeJson(redact(args, HISTORY_REDACT)) });
}

/** A result that carries a secret the daemon knows (a page echoing a key) shows it redacted. */
export function toolResultXml(result: ToolResult): string {
  // Content blocks are kept with their binary parts described, not inlined (src/tools/content.ts).
  const value =
    result.status === 'ok' && isToolContent(result.value) ? describeContent(result.value) : undefined;
  const body = knownSecrets.redact(
    result.status === 'ok' ? safeJson(value ?? result.value) : safeJson(result.error),
  );
  return encodePayload('tool-result', { tool: result.tool, status: result.status, result: body });
}
