/**
 * Every failure Organism reports is one of these classes, each with a stable, dotted `code`
 * (`<area>.<what>`). Transports, backends and the HTTP API all map failures through here, so the
 * same failure reads the same wherever it surfaces. Add a class here rather than throwing a bare
 * Error.
 *
 * The area of a code is the module that raises it: `bus.*` for the bus (`bus.routing`,
 * `bus.busy`, `bus.budget`, `bus.shutting_down`), `handler.*` for a listener's handler
 * (`handler.timeout`), `thread.*`, `cli.*` (`cli.usage`), `config.*`, `xml.*`, `kv.*`, and so on.
 * `<SystemError><code>` and the HTTP API's `error.code` carry the same codes.
 *
 * `OrganismError` and every class below are part of the public surface (`import { OrganismError }
 * from 'organism'`): a user's tool or listener can throw `new OrganismError('mytool.quota', '...')`,
 * or extend it (`class QuotaError extends OrganismError<'mytool.quota'> {}`), and the code reaches
 * the caller unchanged instead of becoming a generic tool error.
 */

/** Extra structured detail safe to show a caller (never secrets). */
export type ErrorDetails = Record<string, unknown>;

export class OrganismError<C extends string = string> extends Error {
  /** Stable, dotted, machine-readable code, e.g. `config.invalid`. */
  readonly code: C;
  /** Extra structured detail safe to show a caller (never secrets). */
  readonly details: ErrorDetails | undefined;

  constructor(code: C, message: string, details?: ErrorDetails, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }

  toJSON(): { code: C; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** What a fixed-code error's arguments become: its message, and optionally details and options. */
type Parts = readonly [message: string, details?: ErrorDetails, options?: ErrorOptions];
/** The constructor fixedCode() gives: its instances are OrganismError<C>. */
type Coded<C extends string, A extends unknown[]> = new (...args: A) => OrganismError<C>;

/**
 * A base for an error with one fixed code whose message is built from its arguments:
 * `class BusyError extends fixedCode('bus.busy', (listener: string) => [...]) {}`.
 */
function fixedCode<C extends string, A extends unknown[]>(
  code: C,
  build: (...args: A) => Parts,
): Coded<C, A> {
  return class extends OrganismError<C> {
    constructor(...args: A) {
      super(code, ...build(...args));
    }
  };
}

/** One problem found in organism.yaml: where it is and what was expected. */
export interface ConfigIssue {
  file: string;
  line?: number;
  column?: number;
  /** Key path such as `listeners[1].peers[0]`. */
  path: string;
  message: string;
}

/** organism.yaml could not be read, parsed or validated; carries every issue found, not just the first. */
export class ConfigError extends OrganismError<'config.invalid'> {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super('config.invalid', issues.map(formatConfigIssue).join('\n'), { count: issues.length });
    this.issues = issues;
  }
}

export function formatConfigIssue(issue: ConfigIssue): string {
  const where =
    issue.line === undefined
      ? issue.file
      : `${issue.file}:${issue.line}${issue.column ? `:${issue.column}` : ''}`;
  return `${where}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}`;
}

export type XmlErrorCode =
  | 'xml.malformed'
  | 'xml.too_large'
  | 'xml.too_deep'
  | 'xml.too_many_attributes'
  | 'xml.too_many_elements'
  | 'xml.text_too_long'
  | 'xml.doctype'
  | 'xml.encoding'
  | 'xml.empty'
  | 'xml.multiple_roots'
  | 'xml.envelope'
  | 'xml.unencodable';
/** Input XML refused by the parser: malformed, over a limit, DOCTYPE/entities, bad encoding. Details: line, column. */
export class XmlError extends OrganismError<XmlErrorCode> {}

/** A listener's payload JSON Schema could not be compiled (ajv refused it). */
export class SchemaError extends fixedCode('schema.invalid', (tag: string, message: string) => [
  `payload schema for <${tag}> is invalid: ${message}`,
  { tag },
]) {}

/**
 * A Standard Schema (zod, valibot, arktype...) Organism cannot read: it has no JSON Schema form, or
 * its conversion failed. `owner` names where it is used (a listener's payload, a tool's args).
 */
export class SchemaFormError extends fixedCode(
  'schema.no_json_form',
  (owner: string, message: string, options?: ErrorOptions) => [`${owner}: ${message}`, { owner }, options],
) {}

/**
 * A payload did not match its listener's schema. `details.path` names the (first) field,
 * `details.fields` every field that is missing or wrong, each with its problem.
 */
export class PayloadValidationError extends fixedCode(
  'payload.invalid',
  (
    message: string,
    details?: { tag: string; path?: string; fields?: Array<{ path: string; message: string }> },
  ) => [message, details],
) {}

/** No listener accepts the message, or the sender may not address it. Text is deliberately generic. */
export class RoutingError extends fixedCode('bus.routing', (message?: string) => [
  message ?? 'Message could not be delivered. Please verify your target and try again.',
]) {}

/** A queue is full; the caller should retry later rather than the runtime growing memory. */
export class BusyError extends fixedCode('bus.busy', (listener: string) => [
  `listener ${listener} is busy; retry later`,
  { listener },
]) {}

/** A per-thread budget (hops, depth) was exhausted. */
export class BudgetError extends fixedCode('bus.budget', (what: 'hops' | 'depth', limit: number) => [
  `thread ${what} budget of ${limit} exhausted`,
  { what, limit },
]) {}

/** A handler did not finish in time. */
export class HandlerTimeoutError extends fixedCode('handler.timeout', (listener: string, ms: number) => [
  `handler ${listener} timed out after ${ms} ms`,
  { listener, ms },
]) {}

/** The thread id given does not exist (or was collected). */
export class ThreadNotFoundError extends fixedCode('thread.not_found', (thread: string) => [
  `thread not found: ${thread}`,
  { thread },
]) {}

/** The bus is shutting down and accepts no new work. */
export class ShuttingDownError extends fixedCode('bus.shutting_down', () => [
  'the organism is shutting down',
]) {}

/** A listener module could not be loaded or does not export a listener. */
export class ListenerLoadError extends fixedCode(
  'listener.load',
  (module: string, reason: string, options?: ErrorOptions) => [
    `cannot load listener module ${module}: ${reason}`,
    { module },
    options,
  ],
) {}

/** Bad use of the CLI (unknown flag, missing argument). Exit code 1 or 2 as the command documents. */
export class UsageError extends fixedCode('cli.usage', (message: string) => [message]) {}

/**
 * `organism init` would write through a symbolic link or over what is not a plain file
 * (`init.unsafe_path`, nothing written), or a write failed part way (`init.write`). Details: paths.
 */
export class ProjectWriteError extends OrganismError<'init.unsafe_path' | 'init.write'> {}

/** A tool definition was refused at registration (bad name, schema, capability, duplicate). */
export class ToolRegistrationError extends fixedCode(
  'tools.registration',
  (tool: string, message: string) => [`tool ${tool}: ${message}`, { tool }],
) {}

/** The tool manifest or its signature could not be read, written or verified. */
export class IntegrityError extends fixedCode(
  'tools.integrity',
  (message: string, details?: ErrorDetails) => [message, details],
) {}

/** The revocations file could not be read or written. */
export class RevocationError extends fixedCode(
  'tools.revocations',
  (message: string, details?: ErrorDetails) => [message, details],
) {}

/** The audit log could not be written, read, or its hash chain is broken. */
export class AuditError extends OrganismError<'audit.write' | 'audit.read' | 'audit.broken' | 'audit.key'> {}

export type KvErrorCode =
  | 'kv.invalid_key'
  | 'kv.invalid_namespace'
  | 'kv.invalid_value'
  | 'kv.invalid_ttl'
  | 'kv.value_too_large'
  | 'kv.namespace_denied'
  | 'kv.unavailable'
  | 'kv.backend'
  | 'kv.io'
  | 'kv.corrupt'
  | 'kv.locked'
  | 'kv.closed';
/** The key/value store refused an input or its backend failed. Same codes from every backend. */
export class KvError extends OrganismError<KvErrorCode> {}

export type MailErrorCode =
  | 'mail.not_configured'
  | 'mail.header_injection'
  | 'mail.invalid_address'
  | 'mail.too_many_recipients'
  | 'mail.connection'
  | 'mail.auth'
  | 'mail.rejected'
  | 'mail.send_failed';
/** send_email refused its input or the SMTP server failed. Messages never carry the SMTP password. */
export class MailError extends OrganismError<MailErrorCode> {}

export type CommandErrorCode =
  | 'command.bad_argument'
  | 'command.syntax'
  | 'command.needs_shell'
  | 'command.not_allowed'
  | 'command.not_found'
  | 'command.not_executable'
  | 'command.bad_cwd'
  | 'command.bad_config'
  | 'command.spawn'
  | 'command.aborted';
/**
 * run_command could not run what it was asked to. A program that runs and exits non-zero is a
 * normal result (exit_code), not this error. A refusal by a rule carries `details.rule_id`.
 */
export class CommandError extends OrganismError<CommandErrorCode> {}

/**
 * The OS sandbox for programs the runtime starts cannot be used: bubblewrap is missing or cannot
 * create its namespaces (`sandbox.unavailable`), or it was asked for something it cannot confine
 * (`sandbox.bad_request`: a relative path, a workspace that does not exist). A workspace's
 * size-bounded volume cannot be mounted here (`sandbox.volume_unavailable`: not root, no loop
 * device), could not be made or mounted (`sandbox.volume`), or is no longer mounted on its
 * workspace (`sandbox.volume_gone`).
 */
export class SandboxError extends OrganismError<
  | 'sandbox.unavailable'
  | 'sandbox.bad_request'
  | 'sandbox.volume_unavailable'
  | 'sandbox.volume'
  | 'sandbox.volume_gone'
> {}

export type FileToolErrorCode =
  | 'file.path_refused'
  | 'file.not_found'
  | 'file.is_directory'
  | 'file.not_directory'
  | 'file.permission_denied'
  | 'file.too_large'
  | 'file.bad_argument'
  | 'file.io'
  | 'file.aborted';
/**
 * read_file / write_file / list_dir failed: the path was refused (`details.rule_id`), does not
 * exist, has the wrong type, is over a size limit, or the file system said no.
 */
export class FileToolError extends OrganismError<FileToolErrorCode> {}

/**
 * The shell guard could not read a command: unbalanced quotes or parentheses, over 8 KiB, or
 * nested deeper than the guard follows. The guard turns it into a deny verdict; it is not thrown
 * past the guard.
 */
export class ShellParseError extends OrganismError<
  'guard.shell_unbalanced' | 'guard.shell_too_long' | 'guard.shell_too_deep'
> {}

export type CalculationErrorCode =
  | 'calculate.empty'
  | 'calculate.too_long'
  | 'calculate.too_complex'
  | 'calculate.syntax'
  | 'calculate.not_allowed'
  | 'calculate.unknown_name'
  | 'calculate.not_loaded'
  | 'calculate.math'
  | 'calculate.not_finite'
  | 'calculate.aborted';
/**
 * calculate refused or could not evaluate an expression. Syntax errors carry `details.column`
 * (1-based, in the expression as the caller wrote it).
 */
export class CalculationError extends OrganismError<CalculationErrorCode> {}

export type NetworkErrorCode =
  | 'net.bad_url'
  | 'net.bad_config'
  | 'net.bad_header'
  | 'net.bad_body'
  | 'net.method_not_allowed'
  | 'net.refused'
  | 'net.too_many_redirects'
  | 'net.dns'
  | 'net.connection_refused'
  | 'net.unreachable'
  | 'net.connection_reset'
  | 'net.tls'
  | 'net.protocol'
  | 'net.timeout'
  | 'net.aborted'
  | 'net.failed';
/**
 * An outbound HTTP request (fetch_url, webhook, web_search) was refused or failed. A refusal by
 * the web guard (first hop or a redirect) is `net.refused` with `details.rule_id` / `suggestion`.
 * An HTTP error status is not this error: it is a normal result with its status_code.
 */
export class NetworkError extends OrganismError<NetworkErrorCode> {}

/** web_search is not configured, or its provider answered with an error or something unreadable. Never carries the API key. */
export class SearchError extends OrganismError<
  'search.not_configured' | 'search.bad_query' | 'search.provider_status' | 'search.bad_response'
> {}

export type LibrarianErrorCode =
  | 'librarian.invalid_path'
  | 'librarian.invalid_argument'
  | 'librarian.denied'
  | 'librarian.read_only'
  | 'librarian.not_found'
  | 'librarian.conflict'
  | 'librarian.query'
  | 'librarian.auth'
  | 'librarian.not_configured'
  | 'librarian.backend'
  | 'librarian.io'
  /** The embedded engine cannot do this XQuery feature right, so it refuses before running. */
  | 'librarian.unsupported';
/**
 * A librarian_* call failed: a path outside allowed_collections, a query refused as not read-only,
 * a document or collection that does not exist, an XQuery error (with eXist's or fontoxpath's line
 * and column in `details`), eXist refusing the credentials, or the backend being unreachable. Both
 * backends (embedded, exist) use the same codes. Never carries the eXist password.
 */
export class LibrarianError extends OrganismError<LibrarianErrorCode> {}

export type LlmErrorCode =
  | 'llm.not_configured'
  | 'llm.unavailable'
  | 'llm.rate_limited'
  | 'llm.server'
  | 'llm.http'
  | 'llm.network'
  | 'llm.timeout'
  | 'llm.aborted'
  | 'llm.bad_response'
  | 'llm.script'
  | 'llm.no_client'
  | 'llm.client_refused'
  | 'llm.all_failed';
/**
 * An LLM backend could not be used or answered badly. `retryable` says whether the same request
 * may succeed later (429, 5xx, network); `retryAfterMs` carries the server's retry-after. Messages
 * never carry an API key: provider error bodies are redacted before they get here. `mcp-sampling`
 * adds two: `llm.no_client` (the thread has no MCP client to ask, or that client offers no
 * sampling) and `llm.client_refused` (the client or its user declined sampling/createMessage).
 */
export class LlmError extends OrganismError<LlmErrorCode> {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(
    code: LlmErrorCode,
    message: string,
    options: { retryable?: boolean; retryAfterMs?: number; details?: ErrorDetails; cause?: unknown } = {},
  ) {
    super(code, message, options.details, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** An agent listener's configuration cannot work (a peer and a tool share a function name, ...). */
export class AgentConfigError extends fixedCode('agent.config', (agent: string, message: string) => [
  `agent ${agent}: ${message}`,
  { agent },
]) {}

/**
 * The HTTP API refused a caller: no bearer token or an unknown one (401), or a role below what
 * the action needs (403). The message never echoes the token that was sent.
 */
export class AuthError extends OrganismError<'auth.required' | 'auth.invalid' | 'auth.forbidden'> {}

/**
 * The HTTP API could not start as configured (an address beyond loopback with no tokens, a token
 * env var that is unset, a local token file it cannot keep private, a port in use or not open to
 * it: `server.address_in_use`, `server.listen`), or turned a request away to
 * protect itself (rate limit, overload).
 */
export class ServerError extends OrganismError<
  | 'server.unsafe_bind'
  | 'server.auth_env'
  | 'server.rate_limited'
  | 'server.overloaded'
  | 'server.local_token'
  | 'server.address_in_use'
  | 'server.listen'
> {}

/** A hot reload could not be applied; the running organism is unchanged. */
export class ReloadError extends OrganismError<'reload.in_progress' | 'reload.failed'> {}

/**
 * A lock the OS releases (src/storage/dir-lock.ts) is held by a live process (`lock.held`; the
 * holder's answer, its pid and what it added, in `details.holder`), or cannot be made (`lock.io`).
 */
export class LockError extends OrganismError<'lock.held' | 'lock.io'> {}

/** The bus journal (memory transport, see src/bus/journal) could not be written or read. */
export class JournalError extends OrganismError<'journal.io'> {}

/** The on-disk thread history could not be written or read. */
export class HistoryError extends OrganismError<'history.io' | 'history.closed'> {}

export type TransportErrorCode =
  | 'transport.closed'
  | 'transport.unavailable'
  | 'transport.invalid_option'
  | 'transport.duplicate_subscriber'
  | 'transport.no_subscriber'
  | 'transport.backend';
/**
 * A bus transport refused or failed an operation (closed, Redis unreachable, a bad group or
 * listener name). Messages name host:port only, never a Redis URL, which may carry a password.
 */
export class TransportError extends OrganismError<TransportErrorCode> {}

/**
 * A decision on a tool call's approval was refused: no such approval, decided already (by someone
 * else or by its timeout), or the decider lacks the role the listener's tool_config asks for. Or a
 * call was not put to a person at all: too many of its kind wait already (approval_max_pending), or
 * its arguments cannot be shown as they would run (not_reviewable).
 */
export class ApprovalError extends OrganismError<
  | 'approval.not_found'
  | 'approval.decided'
  | 'approval.forbidden'
  | 'approval.too_many'
  | 'approval.not_reviewable'
> {}

/**
 * The runtime's own state store (src/state: approvals, once-only effects) cannot seal or check its
 * records: no audit key to derive its key from.
 */
export class StateError extends OrganismError<'state.no_key'> {}

/** organism/testing: a condition a test waited for with until() did not come true in time. */
export class WaitTimeoutError extends fixedCode('testing.timeout', (what: string, ms: number) => [
  `timed out after ${ms} ms waiting for ${what}`,
  { what, ms },
]) {}

/**
 * organism/testing was asked for something it cannot run as asked: a built-in tool that does not
 * exist, one given twice, or one that would reach the network or the host (run_command, fetch_url,
 * web_search) with neither a fake nor an opt-in.
 */
export class TestKitError extends OrganismError<
  'testing.unknown_tool' | 'testing.duplicate_tool' | 'testing.needs_fake' | 'testing.invalid_option'
> {}

/** An MCP server (consumed) or the organism's own MCP endpoint: down, refusing, too slow, or off-protocol. */
export class McpError extends OrganismError<
  'mcp.unavailable' | 'mcp.tool' | 'mcp.timeout' | 'mcp.protocol' | 'mcp.config' | 'mcp.refused'
> {}

/**
 * An MCP session of the organism's own endpoint: unknown (ended, expired, or another credential's:
 * one message for all three, so a token learns nothing of others' sessions), or one too many.
 */
export class McpSessionError extends OrganismError<'mcp.session_not_found' | 'mcp.session_limit'> {}

/**
 * Asking the MCP client that started a call (ClientChannel): it does not offer what was asked
 * (`mcp.client_lacks`), it is gone or the call ended (`mcp.client_gone`), it did not answer in time
 * (`mcp.client_timeout`), or it answered with an error (`mcp.client_refused`).
 */
export class McpClientError extends OrganismError<
  'mcp.client_lacks' | 'mcp.client_gone' | 'mcp.client_timeout' | 'mcp.client_refused'
> {}

/**
 * An id prefix (8 or more characters, as the dashboard and `organism tail` show ids) that more than
 * one thread or approval starts with; `details.candidates` lists them (at most 10).
 */
export class AmbiguousIdError extends fixedCode(
  'id.ambiguous',
  (kind: 'thread' | 'approval', prefix: string, candidates: readonly string[]) => [
    `${kind} id '${prefix}' is ambiguous: it starts ${candidates.length >= 10 ? '10 or more' : candidates.length} ${kind}s' ids (${candidates.join(', ')}); give more characters`,
    { kind, prefix, candidates },
  ],
) {}

/**
 * POST /api/v1/call: the thread ended in a failure (`call.failed`: a handler failure, a
 * SystemError or huh), was stopped (`call.stopped`: killed, or out of its budget), or did not
 * answer in time (`call.timeout`; the thread goes on). `details.thread` names the thread.
 */
export class CallError extends OrganismError<'call.failed' | 'call.stopped' | 'call.timeout'> {}

/** A module of prompt_modules or resource_modules that does not load or declares no valid prompt or resource. */
export class FeatureModuleError extends fixedCode('mcp.feature_module', (module: string, message: string) => [
  `module ${module}: ${message}`,
  { module },
]) {}
