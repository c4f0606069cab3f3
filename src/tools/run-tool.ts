/**
 * Step 11 of a tool call (dispatcher.ts): the tool runs with its timeout and an AbortSignal, and
 * whatever it throws becomes a failure the caller can read: a timeout, a refusal by one of the
 * tool's own rules (an OrganismError with a rule_id), or an error with the tool's code.
 */
import { redactString } from '../audit/redact.ts';
import { OrganismError } from '../errors.ts';
import type { ToolFailureCode } from './failure-codes.ts';
import type { RegisteredTool } from './registry.ts';
import type { ResolvedListener, ResolvedToolConfig } from './tool-config.ts';
import type { ToolFailure, ToolRunContext, ToolServices } from './types.ts';

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
}

/** What the timer rejects with: told apart from anything the tool throws. */
const TIMED_OUT = Symbol('timed out');

export async function runTool(
  tool: RegisteredTool,
  args: unknown,
  settings: ResolvedToolConfig,
  context: RunContext,
): Promise<{ ok: unknown } | { failure: Refusal }> {
  const { name: listener, trust } = context.listener;
  // Made on first use only: most tools never read the signal, and an AbortController with its
  // signal costs more than the rest of a call's bookkeeping (bench tools, bench mcp).
  let controller: AbortController | undefined;
  let timedOut: Error | undefined;
  const ctx: ToolRunContext = {
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (timedOut) controller.abort(timedOut); // first read after the timeout: already aborted
      }
      return controller.signal;
    },
    listener,
    thread: context.thread,
    callId: context.callId,
    config: settings.config,
    timeoutMs: settings.timeoutMs,
    workspace: context.workspace,
    dataDir: context.dataDir,
    services: context.services,
    trust,
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const value = await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(TIMED_OUT), settings.timeoutMs);
      let running: unknown;
      try {
        running = tool.run(args, ctx);
      } catch (error) {
        reject(error); // thrown before its first await: a failure like a rejection
        return;
      }
      // Settling after the timeout changes nothing, and a late rejection is handled here.
      Promise.resolve(running).then(resolve, reject);
    });
    return { ok: value };
  } catch (error) {
    if (error === TIMED_OUT) {
      timedOut = new Error(`timed out after ${settings.timeoutMs} ms`);
      controller?.abort(timedOut);
      return {
        failure: {
          status: 'error',
          code: 'Timeout' satisfies ToolFailureCode,
          message: `tool ${tool.definition.name} timed out after ${settings.timeoutMs} ms`,
        },
      };
    }
    const code = error instanceof OrganismError ? error.code : ('ToolError' satisfies ToolFailureCode);
    // The message goes back to an agent (and its LLM): scrub anything that looks like a credential.
    const message = redactString(error instanceof Error ? error.message : String(error));
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
