/**
 * The contract between the tool runtime and the tools. A tool is one file in tools/ (or
 * librarian/) default-exporting a ToolDefinition; the runtime owns grants, guards, limits and audit,
 * so a tool's `run` only does the work.
 */
import type { OrganismConfig, ToolConfig, TrustLevel } from '../config/types.ts';
import type { ClientChannel } from '../mcp/server/client-channel.ts';
import type { StandardSchemaV1 } from '../schema/standard.ts';
import type { TraceScope } from '../telemetry/types.ts';
import type { JsonSchema } from '../xml/json-schema.ts';

/** The one capability a tool needs. A thread's capability scope is a subset of these. */
export const CAPABILITIES = [
  'read',
  'write',
  'fetch_web',
  'exec_shell',
  'db_read',
  'db_write',
  'send_email',
  'post_webhook',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** Which guard judges a tool's calls before it runs. */
export type GuardKind = 'shell' | 'file' | 'web' | 'email';

export type { ToolConfig } from '../config/types.ts';

/**
 * Shared services tools reach through their run context. Long-lived clients (a Redis connection,
 * an SMTP transport, a librarian backend) are created on first use through `resources`, keyed by
 * name, and closed by the runtime at shutdown; so no tool keeps its own global state.
 */
export interface ToolServices {
  /** The whole validated organism config (tools read their own section: kv, smtp, librarian, ...). */
  readonly config: OrganismConfig;
  readonly resources: ResourceCache;
  /**
   * Where `*_env` keys (smtp.password_env, web_search.api_key_env, librarian.password_env) are read:
   * the process environment over the `.env` beside organism.yaml (LoadedOrganism.env). Default
   * process.env. Holds secrets: read one variable, never log or return it.
   */
  readonly env?: NodeJS.ProcessEnv;
}

export interface ResourceCache {
  /** The resource under `key`, created once by `create`; `close` runs at runtime shutdown. */
  get<T>(
    key: string,
    create: () => T | Promise<T>,
    close?: (resource: T) => void | Promise<void>,
  ): Promise<T>;
}

export interface ToolRunContext {
  /** Aborted on timeout or shutdown; pass it to every I/O call. */
  readonly signal: AbortSignal;
  readonly listener: string;
  readonly thread: string;
  /** Unique id of this call; side-effecting tools use it to act once. */
  readonly callId: string;
  /** This listener's tool_config for this tool. */
  readonly config: ToolConfig;
  /** This call's time limit (ms): when it passes, the caller is answered Timeout and `signal` aborts. */
  readonly timeoutMs: number;
  /** Absolute path of the organism's workspace (file tools and run_command are confined to it). */
  readonly workspace: string;
  /** Absolute path of the organism's data dir. */
  readonly dataDir: string;
  readonly services: ToolServices;
  /** The calling listener's trust level (organism.yaml `trust`); tools pass it to guard checks. Absent: 'medium'. */
  readonly trust?: TrustLevel;
  /**
   * The MCP client that started this call, directly or through the thread it runs in: log and
   * progress notifications, sampling and elicitation. Absent outside an MCP call.
   */
  readonly client?: ClientChannel;
}

/**
 * A tool. `Args` is what `run` receives (after validation: a Standard Schema's output), `Result`
 * what it returns, `Input` what a caller gives (a Standard Schema's input; Args otherwise).
 * defineTool infers all three from `args` and `run`.
 */
export interface ToolDefinition<Args = any, Result = unknown, Input = Args> {
  /** snake_case, unique in the registry. */
  name: string;
  /** Written for an LLM: what it does, when to use it, what it returns. */
  description: string;
  /**
   * The arguments object: a JSON Schema (ajv checks it), or a Standard Schema with a JSON Schema
   * form (zod 4.2+; see registerJsonSchemaAdapter), which checks the arguments itself. Either way
   * nothing runs before the arguments pass, and `run` gets what the check gave back.
   */
  args: JsonSchema | StandardSchemaV1;
  readOnly: boolean;
  capability: Capability;
  /**
   * The capability a call needs under a listener's tool_config, when that decides it (MCP tools:
   * see src/mcp/client/toolset.ts); `capability` otherwise.
   */
  capabilityFor?(config: ToolConfig): Capability;
  /** Time limit of a call unless tool_config.timeout_ms says otherwise (MCP: the server's timeout_ms). */
  timeoutMs?: number;
  source: 'native' | 'external';
  /** The guard that judges each call, if any. */
  guard?: GuardKind;
  /**
   * JSON Schema of this tool's own `tool_config` keys (allowed_paths, allowed_domains, ...). The
   * common keys (rate_limit, timeout_ms, max_result_bytes) are added by the runtime.
   */
  config?: JsonSchema;
  /** True for tools with effects outside the organism (mail, webhooks, writes); they act once per call id. */
  sideEffect?: boolean;
  /**
   * Why the tool cannot be used in this organism (say, no SMTP configured), or null when it can.
   * `config` is the calling listener's tool_config for it, when there is a listener.
   */
  unavailable?(services: ToolServices, config?: ToolConfig): string | null;
  /**
   * A warning about how a listener's tool_config runs this tool (say, run_command with no sandbox),
   * or null. The runtime logs it at start and `organism tools list` shows it.
   */
  notice?(config: ToolConfig): string | null;
  run(args: Args, ctx: ToolRunContext): Promise<Result>;
  /** Types only, never set: what a caller gives (`organism types` reads it). */
  readonly '~input'?: Input;
}

/**
 * A tool as the registry holds it: `args` in JSON Schema form, whatever the module declared (the
 * form feeds MCP and LLM tool definitions and `organism tools`).
 */
export type ResolvedToolDefinition = ToolDefinition & { readonly args: JsonSchema };

/** One tool call as the runtime asks for it: what the bus hands the dispatcher (its ToolPort). */
export interface CallRequest {
  tool: string;
  args: unknown;
  /** The calling listener; its grants and tool_config apply. */
  listener: string;
  thread: string;
  /** The thread's capability scope; grants are intersected with it. Absent means unscoped. */
  scope?: readonly Capability[];
  /** Idempotency key for side-effecting tools; one is made up when absent. */
  callId?: string;
  /** A person calling as `listener` through the API (their token's name), kept in the audit record. */
  by?: string;
  /** Tracing on: the span this call's `execute_tool` span starts under (the hop or the agent's task). */
  trace?: Pick<TraceScope, 'tool'>;
  /**
   * Told when the call starts (true) and stops (false) waiting for a person's approval, so the
   * calling handler's time limit can stand still meanwhile (src/bus/handle.ts).
   */
  waiting?: (on: boolean) => void;
  /** The MCP client the call came from (a tool called over MCP, or in a thread an MCP call started). */
  client?: ClientChannel;
}

/** Why a call was refused or failed; readable by an agent so it can recover. */
export interface ToolFailure {
  code: string;
  message: string;
  rule_id?: string;
  suggestion?: string;
}

/**
 * What every call returns, refused or not. Never thrown. `V` is the tool's result type (known where
 * `organism types` typed the call): an ok result carries it, unless the result was over the
 * listener's max_result_bytes: then `truncated` is set and `value` is the cut JSON text.
 */
export type ToolResult<V = unknown> =
  | { status: 'ok'; tool: string; value: V; warnings?: string[]; truncated?: undefined }
  | {
      status: 'ok';
      tool: string;
      value: string;
      warnings?: string[];
      truncated: { original_bytes: number };
    }
  | { status: 'refused'; tool: string; error: ToolFailure }
  | { status: 'error'; tool: string; error: ToolFailure };

/** How handlers call tools: `await ctx.tools.call('calculate', { expression: '2 + 2' })`. */
export interface ToolCaller {
  /**
   * `key`, when given, names this call within the message being handled (instead of its place in
   * the run), so a handler that runs again after a crash and skips calls it already made still
   * gives each call the same id, and a side-effecting one acts once. Must be unique per message.
   */
  call(name: string, args: unknown, key?: string): Promise<ToolResult>;
}
