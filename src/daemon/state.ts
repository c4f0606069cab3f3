/**
 * What a running daemon holds, in one record the service and the reload share. Fields a reload
 * replaces (config, loaded, auth, limiter, agents, sanitized) are swapped together at its end.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { AgentRuntime } from '../agent/attach.ts';
import type { AuditLog, AuditSink } from '../audit/log.ts';
import type { ChangeRecord } from '../audit/record.ts';
import type { Bus } from '../bus/bus.ts';
import type { HistoryLog, ThreadHistory } from '../bus/history/index.ts';
import type { ListenerSpec } from '../bus/listeners.ts';
import type { RedisTransport } from '../bus/transport/redis/index.ts';
import type { LoadedOrganism } from '../config/index.ts';
import { parseConfigText, toPlain } from '../config/read.ts';
import type { OrganismConfig } from '../config/types.ts';
import type { ClientChannels } from '../mcp/server/client-channel.ts';
import type { Authenticator } from '../server/auth.ts';
import type { EventHub } from '../server/events.ts';
import type { RateLimiter } from '../server/rate-limit.ts';
import { sanitizeConfig } from '../server/sanitize.ts';
import type { ApprovalGate } from '../tools/approval/gate.ts';
import type { Resources } from '../tools/services.ts';
import type { SwappableTools } from './tools.ts';

export interface DaemonState {
  configPath: string;
  env: NodeJS.ProcessEnv;
  loaded: LoadedOrganism;
  config: OrganismConfig;
  /** GET /organism/config, computed once per load. */
  sanitized: unknown;
  logger: Logger;
  bus: Bus;
  tools: SwappableTools;
  /** The tool services' resources now in use (shared by reloads that leave kv/smtp/... alone). */
  resources: Resources;
  agents: AgentRuntime;
  auditLog: AuditLog;
  auditSink: AuditSink;
  history: ThreadHistory;
  historyLog: HistoryLog | undefined;
  hub: EventHub;
  /** Calls waiting for a person's approval; one gate for the daemon's life (reloads keep it). */
  approvals: ApprovalGate;
  /**
   * The MCP clients that started calls, by the thread each call started (one map for the daemon's
   * life): where an agent's mcp-sampling turn and an approval by elicitation find their client.
   */
  clientChannels: ClientChannels;
  /** With bus.transport redis: the transport, for its dead letters (GET /dead-letters). */
  redisBus?: RedisTransport;
  auth: Authenticator;
  injectLimiter: RateLimiter;
  /** Address the API actually listens on (config or --host). */
  listenHost: string;
  started: number;
  version: string;
  reloads: { applied: number; refused: number; last: string | null };
  reloading: boolean;
  stopping: boolean;
  streamClients: () => number;
}

/** The listeners the bus runs: every one with a definition (a module, or an agent's LLM loop). */
export function listenerSpecs(loaded: LoadedOrganism): ListenerSpec[] {
  const specs: ListenerSpec[] = [];
  for (const listener of loaded.listeners) {
    if (listener.definition)
      specs.push({ config: listener.config, definition: listener.definition, tag: listener.tag });
  }
  return specs;
}

/** The loaded config made safe to show, using the file as written for its `${VAR}` references. */
export async function sanitizedConfig(config: OrganismConfig): Promise<unknown> {
  let raw: unknown = {};
  try {
    const parsed = parseConfigText(await readFile(config.file, 'utf8'), config.file);
    if (parsed.source) raw = toPlain(parsed.source);
  } catch {
    // The file changed or vanished since it was loaded: everything is masked the strict way.
  }
  return sanitizeConfig(config, raw);
}

/** An operator's change, in the audit log (the hash chain covers it like any tool call). */
export function auditChange(
  state: Pick<DaemonState, 'auditSink'>,
  action: ChangeRecord['action'],
  by: string,
  fields: { listener?: string; thread?: string; detail?: string } = {},
): void {
  state.auditSink.append({
    type: 'change',
    time: new Date().toISOString(),
    action,
    by,
    listener: fields.listener ?? null,
    thread: fields.thread ?? null,
    detail: fields.detail ?? null,
  });
}
