/**
 * Step 11 of a tool call (dispatcher.ts): the tool runs with its timeout and an AbortSignal, and
 * whatever it throws becomes a failure the caller can read: a timeout, a refusal by one of the
 * tool's own rules (an OrganismError with a rule_id), or an error with the tool's code.
 */
import { redactString } from '../audit/redact.ts';
import type { TrustLevel } from '../config/types.ts';
import { OrganismError } from '../errors.ts';
import type { ClientChannel } from '../mcp/server/client-channel.ts';
import type { ToolFailureCode } from './failure-codes.ts';
import type { RegisteredTool } from './registry.ts';
import type { ResolvedListener, ResolvedToolConfig } from './tool-config.ts';
import type { ToolConfig, ToolFailure, ToolRunContext, ToolServices } from './types.ts';

/** A failed call as the dispatcher answers it. */
export type Refusal = ToolFailure & { status: 'refused' | 'error' };

/** The call as the tool sees it, besides its arguments and tool_config. */
export interface RunContext {
  thread: string;
  callId: string;
  listener: ResolvedListener;
  workspace: string;
  dataDir: string;
  services: ToolServices;
  client?: ClientChannel | undefined;
}

/** What the timer rejects with: told apart from anything the tool throws. */
const TIMED_OUT = Symbol('timed out');

/**
 * What a tool is called with. A class, not an object literal: a literal with a getter cost
 * ~0.5 µs per call to build (V8 defines the accessor at run time), a tenth of the runtime's share
 * of an MCP call. Its AbortController is made on first read of `signal`: most tools never read it,
 * and making one costs more than the rest of the call's bookkeeping.
 */
class CallContext implements ToolRunContext {
  #controller: AbortController | undefined;
  #timedOut: Error | undefined;

  constructor(
    readonly listener: string,
    readonly thread: string,
    readonly callId: string,
    readonly config: ToolConfig,
    readonly timeoutMs: number,
    readonly workspace: string,
    readonly dataDir: string,
    readonly services: ToolServices,
    readonly trust: TrustLevel | undefined,
    readonly client: ClientChannel | undefined,
  ) {}

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#timedOut) this.#controller.abort(this.#timedOut); // first read after the timeout
    }
    return this.#controller.signal;
  }

  timeOut(reason: Error): void {
    this.#timedOut = reason;
    this.#controller?.abort(reason);
  }
}

export async function runTool(
  tool: RegisteredTool,
  args: unknown,
  settings: ResolvedToolConfig,
  context: RunContext,
): Promise<{ ok: unknown } | { failure: Refusal }> {
  const ctx = new CallContext(
    context.listener.name,
    context.thread,
    context.callId,
    settings.config,
    settings.timeoutMs,
    context.workspace,
    context.dataDir,
    context.services,
    context.listener.trust,
    context.client,
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    const value = await new Promise((resolve, reject) => {
      let running: unknown;
      try {
        running = tool.run(args, ctx);
      } catch (error) {
        reject(error); // thrown before its first await: a failure like a rejection
        return;
      }
      // Armed once the tool has started: a tool that sends a request (an MCP call, a fetch) has
      // sent it by now, so the timer costs the call nothing while it waits for the answer.
      timer = setTimeout(() => reject(TIMED_OUT), settings.timeoutMs);
      // Settling after the timeout changes nothing, and a late rejection is handled here.
      Promise.resolve(running).then(resolve, reject);
    });
    return { ok: value };
  } catch (error) {
    if (error === TIMED_OUT) {
      ctx.timeOut(new Error(`timed out after ${settings.timeoutMs} ms`));
      return {
        failure: {
          status: 'error',
          code: 'Timeout' satisfies ToolFailureCode,
          message: `tool ${tool.definition.name} timed out after ${settings.timeoutMs} ms`,
        },
      };
    }
    const code = error instanceof OrganismError ? error.code : ('ToolError' satisfies ToolFailureCode);
    // The message goes back to an agent (and its LLM) and into the audit: bounded, then scrubbed of
    // anything that looks like a credential. A tool (an MCP server) decides how long its error is.
    const message = redactString(boundedMessage(error instanceof Error ? error.message : String(error)));
    // A tool that refuses by one of its own rules (a path outside allowed_paths, a command not in
    // allowed_commands) says so with a rule_id: that is a refusal the caller can act on, not a failure.
    const ruleId = error instanceof OrganismError ? error.details?.rule_id : undefined;
    if (typeof ruleId === 'string') {
      const suggestion = (error as OrganismError).details?.suggestion;
      return {
        failure: {
          status: 'refused',
          code,
          message: `tool ${tool.definition.name} refused: ${message}`,
          rule_id: ruleId,
          ...(typeof suggestion === 'string' ? { suggestion } : {}),
        },
      };
    }
    return {
      failure: { status: 'error', code, message: `tool ${tool.definition.name} failed: ${message}` },
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Longest failure message a tool can give, in characters; the rest is cut with a note of its length. */
export const MAX_FAILURE_MESSAGE_CHARS = 8192;

function boundedMessage(text: string): string {
  if (text.length <= MAX_FAILURE_MESSAGE_CHARS) return text;
  return `${text.slice(0, MAX_FAILURE_MESSAGE_CHARS)}... [${text.length - MAX_FAILURE_MESSAGE_CHARS} more characters not shown]`;
}
