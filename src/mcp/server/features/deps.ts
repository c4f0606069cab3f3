/**
 * What the prompt, resource and completion features need of the daemon, and how they run the
 * project's own code (a definePrompt's get, a defineResource's read, a complete function): bounded
 * in time, and a failure is the client's error with the reason (redacted), never the daemon's.
 */
import { ErrorCode, McpError as SdkMcpError } from '@modelcontextprotocol/sdk/types.js';
import { redactKnown } from '../../../audit/redact.ts';
import type { McpHost } from '../host.ts';
import type { ResourceChanged } from '../subscriptions.ts';
import { type ProjectFeatures, projectFeatures } from './modules.ts';

export interface FeatureDeps {
  host: McpHost;
  /** The subscriptions hook: a project resource that says it changed tells subscribed sessions. */
  changed?: ResourceChanged;
}

/** How long a project's get, read or complete may take before the request is answered with an error. */
export const PROJECT_CODE_TIMEOUT_MS = 10_000;
/**
 * Most bytes (as JSON, base64 included) one prompt or resource read may answer with: the project's
 * code is the organism's own, but a bug that builds a huge answer costs one request, not the
 * daemon's memory for every client asking.
 */
export const MAX_PROJECT_ANSWER_BYTES = 8 * 1024 * 1024;

/** Throws the request's error when `answer` is over MAX_PROJECT_ANSWER_BYTES. */
export function checkAnswerSize(what: string, answer: unknown): void {
  const bytes = Buffer.byteLength(JSON.stringify(answer) ?? '', 'utf8');
  if (bytes > MAX_PROJECT_ANSWER_BYTES)
    throw new SdkMcpError(
      ErrorCode.InternalError,
      `${what} answered ${bytes} bytes, over the ${MAX_PROJECT_ANSWER_BYTES}-byte bound of a prompt or resource`,
    );
}

/** Most completion values returned (MCP's own bound). */
export const MAX_COMPLETIONS = 100;

export function invalidParams(message: string, data?: Record<string, unknown>): SdkMcpError {
  return new SdkMcpError(ErrorCode.InvalidParams, message, data);
}

/** The project's code answered with something that is not what it should give. */
export function projectError(message: string): SdkMcpError {
  return new SdkMcpError(ErrorCode.InternalError, redactKnown(message));
}

/** The project's prompts and resources; a module that does not load is the request's error. */
export async function features(deps: FeatureDeps): Promise<ProjectFeatures> {
  try {
    return await projectFeatures(deps.host, deps.host.deps.config(), deps.changed);
  } catch (error) {
    throw new SdkMcpError(ErrorCode.InternalError, redactKnown((error as Error).message));
  }
}

/** Runs the project's `fn`; `what` names it in the error ("prompt summary"). */
export async function runProjectCode<T>(what: string, fn: () => T | Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new SdkMcpError(
            ErrorCode.InternalError,
            `${what} did not answer within ${PROJECT_CODE_TIMEOUT_MS} ms`,
          ),
        ),
      PROJECT_CODE_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([Promise.resolve().then(fn), timeout]);
  } catch (error) {
    if (error instanceof SdkMcpError) throw error;
    throw new SdkMcpError(
      ErrorCode.InternalError,
      `${what} failed: ${redactKnown((error as Error)?.message ?? String(error))}`,
    );
  } finally {
    clearTimeout(timer);
  }
}
