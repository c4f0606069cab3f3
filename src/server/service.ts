/**
 * What the HTTP API asks of a running organism. The daemon implements it; the routes depend on
 * this interface (and BusApi / BusQueries), never on the daemon or the Bus class.
 */
import type { BusApi, BusQueries, ThreadStatus } from '../bus/api.ts';
import type { ServerError } from '../errors.ts';
import type { McpHost } from '../mcp/server/host.ts';
import type { ApprovalGate } from '../tools/approval/gate.ts';
import type { Capability, ToolResult } from '../tools/types.ts';
import type { EventHub } from './events.ts';

export interface OrganismInfo {
  name: string;
  description: string | null;
  version: string;
  pid: number;
  started: string;
  uptime_seconds: number;
  config_file: string;
  listeners: number;
  threads: { live: number; in_history: number };
  messages: { in_flight: number; recorded: number };
  memory: { rss_bytes: number; heap_used_bytes: number };
  /**
   * `enabled`: organism.yaml configures tokens (`tokens`, names and roles); `local_token`: the
   * data dir's local token (admin) is accepted too. Every route but /healthz needs one of them.
   */
  auth: { enabled: boolean; local_token: boolean; tokens: Array<{ name: string; role: string }> };
  history: { persisted: boolean; dir: string | null; pending_lines: number; bytes: number };
  reloads: { applied: number; refused: number; last: string | null };
  stream_clients: number;
}

export interface ReloadReport {
  status: 'reloaded';
  by: string;
  time: string;
  added: string[];
  removed: string[];
  replaced: string[];
  unchanged: string[];
  /** Settings that changed in the file but take effect only after a restart (server.port, ...). */
  restart_required: string[];
}

export interface ToolInfo {
  tool: string;
  description: string;
  capability: string;
  read_only: boolean;
  guard: string | null;
  /** With `as`: can that listener use it now, and if not why. */
  available?: boolean;
  reason?: string;
}

/** One tool call an API caller makes as a listener (POST /tools/:tool/call, `organism tools call`). */
export interface ApiToolCall {
  tool: string;
  args: Record<string, unknown>;
  /** The listener (or the `mcp` identity) whose grants, tool_config and trust apply. */
  as: string;
  scope?: Capability[];
  /** The caller's token name, kept in the call's audit record. */
  by: string;
}

export interface KillReport {
  thread: string;
  status: ThreadStatus;
  /** Queued messages dropped. */
  dropped: number;
  /** Running handlers whose signal was aborted. */
  aborted: number;
}

/** GET /dead-letters: one message the bus gave up on after bus.max_deliveries deliveries. */
export interface DeadLetterView {
  /** The dead-letter entry's id (when it was moved, and the `cursor` for the next page). */
  id: string;
  /** When it was moved to the dead letters. */
  time: string;
  listener: string;
  /** The message's id and thread; null when the entry was not a message at all. */
  message: string | null;
  thread: string | null;
  /** Who sent it and its payload's root tag (null as above). */
  from: string | null;
  tag: string | null;
  /** How often it was delivered without being finished. */
  deliveries: number;
  /** Why: the delivery count, and the last failure (a handler error, or why it would not decode). */
  reason: string;
  /** The daemon (consumer) that held it last. */
  consumer: string;
}

export interface DeadLetterQuery {
  limit: number;
  /** `next` of the previous page. */
  cursor?: string;
}

export interface DeadLetterPage {
  dead_letters: DeadLetterView[];
  /** Messages ever dead-lettered in the organism (the list itself keeps the newest 10,000). */
  total: number;
  /** Cursor for the next page; null on the last. */
  next: string | null;
}

export interface OrganismService {
  readonly bus: BusApi & BusQueries;
  readonly events: EventHub;
  /** Tool calls waiting for a person's approval, and the decisions (README "Approval"). */
  readonly approvals: Pick<ApprovalGate, 'list' | 'get' | 'decide'>;
  info(): OrganismInfo;
  /** organism.yaml as loaded, with `${VAR}` references in place of their values and secrets masked. */
  config(): unknown;
  /** Throws ConfigError (the file's problems) or ReloadError; the running organism is then unchanged. */
  reload(by: string): Promise<ReloadReport>;
  kill(thread: string, by: string): KillReport | undefined;
  /** False when there is no such listener. */
  pause(listener: string, by: string): boolean;
  resume(listener: string, by: string): boolean;
  /** All tools; with `as`, their availability to that listener (undefined: no such listener). */
  tools(as?: string): ToolInfo[] | undefined;
  /**
   * What tools may be called as: the listeners, and the `mcp` identity when organism.yaml has an
   * `mcp:` section (`mcpIdentity`; a listener may be named `mcp` where there is none).
   */
  toolCallers(): Array<{ name: string; mcpIdentity: boolean }>;
  /**
   * Runs one call through the daemon's one dispatcher (the same the bus uses) in a thread of its
   * own (`api-<uuid>`); waits for a person where the call needs approval. Never throws for what
   * the tool did: a refusal is a ToolResult.
   */
  callTool(call: ApiToolCall): Promise<{ thread: string; result: ToolResult }>;
  /** The audit log file, flushed first so a page includes what just happened. */
  auditFile(): Promise<string>;
  /** A reason to turn new work away now (history writer behind, shutting down), or undefined. */
  admission(): ServerError | undefined;
  /** Samples the gauges (queue depth...) before /metrics renders. */
  sampleMetrics(): void;
  /**
   * Messages dead-lettered by the bus, newest first (the whole organism with the redis transport;
   * always empty with the in-memory one, which never redelivers). A malformed cursor throws
   * TransportError `transport.invalid_option`.
   */
  deadLetters(query: DeadLetterQuery): Promise<DeadLetterPage>;
  /** What POST /mcp and `organism mcp` offer (src/mcp/server); absent: MCP is not served. */
  mcp?(): Promise<McpHost>;
}
