/** The OrganismService the HTTP API runs on, over the daemon's state. */

import { randomUUID } from 'node:crypto';
import type { AgentRuntime } from '../agent/attach.ts';
import { knownSecrets } from '../audit/redact.ts';
import type { MessageKind } from '../bus/message.ts';
import { toolCallXml, toolResultXml } from '../bus/tool-calls.ts';
import { ServerError, ShuttingDownError } from '../errors.ts';
import { MCP_IDENTITY } from '../mcp/config.ts';
import type { McpHost } from '../mcp/server/host.ts';
import { metrics, sampleBusGauges } from '../observability/metrics.ts';
import type {
  ApiToolCall,
  DeadLetterPage,
  DeadLetterQuery,
  DeadLetterView,
  KillReport,
  OrganismInfo,
  OrganismService,
  ReloadReport,
  ToolInfo,
} from '../server/service.ts';
import { reloadOrganism } from './reload.ts';
import { auditChange, type DaemonState } from './state.ts';

/** History lines waiting for the disk beyond which new injections are turned away (503). */
export const MAX_HISTORY_BACKLOG = 200_000;

export function createOrganismService(state: DaemonState): OrganismService {
  const feedTokens = llmTokenFeeder();
  let mcpHost: McpHost | undefined;
  return {
    get bus() {
      return state.bus;
    },
    get events() {
      return state.hub;
    },
    get approvals() {
      return state.approvals;
    },

    info(): OrganismInfo {
      const { config, bus, history, historyLog } = state;
      const stats = bus.stats();
      const memory = process.memoryUsage();
      return {
        name: config.organism.name,
        description: config.organism.description ?? null,
        version: state.version,
        pid: process.pid,
        started: new Date(state.started).toISOString(),
        uptime_seconds: Math.round((Date.now() - state.started) / 1000),
        config_file: config.file,
        listeners: bus.listeners().length,
        threads: { live: stats.threads, in_history: history.threadCount },
        messages: { in_flight: stats.inFlight, recorded: history.totalAppended },
        memory: { rss_bytes: memory.rss, heap_used_bytes: memory.heapUsed },
        auth: {
          enabled: state.auth.enabled,
          local_token: state.auth.local !== undefined,
          tokens: state.auth.describe(),
        },
        history: {
          persisted: historyLog !== undefined,
          dir: historyLog?.dir ?? null,
          pending_lines: historyLog?.pending ?? 0,
          bytes: historyLog?.bytes ?? 0,
        },
        reloads: { ...state.reloads },
        stream_clients: state.streamClients(),
      };
    },

    config: () => state.sanitized,

    reload: (by: string): Promise<ReloadReport> => reloadOrganism(state, by),

    kill(thread: string, by: string): KillReport | undefined {
      const report = state.bus.kill(thread, by);
      if (report)
        auditChange(state, 'thread.killed', by, {
          thread,
          detail: `dropped ${report.dropped}, aborted ${report.aborted}`,
        });
      return report;
    },

    pause(listener: string, by: string): boolean {
      if (!state.bus.pause(listener)) return false;
      auditChange(state, 'listener.paused', by, { listener });
      state.hub.lifecycle('listener.paused', { listener, by });
      return true;
    },

    resume(listener: string, by: string): boolean {
      if (!state.bus.resume(listener)) return false;
      auditChange(state, 'listener.resumed', by, { listener });
      state.hub.lifecycle('listener.resumed', { listener, by });
      return true;
    },

    tools(as?: string): ToolInfo[] | undefined {
      const runtime = state.tools.runtime;
      const list = runtime.registry.list().map(
        ({ definition: d }): ToolInfo => ({
          tool: d.name,
          description: d.description,
          capability: d.capability,
          read_only: d.readOnly,
          guard: d.guard ?? null,
        }),
      );
      if (as === undefined) return list;
      if (!runtime.dispatcher.listenerNames().includes(as)) return undefined;
      const availability = new Map(runtime.dispatcher.availability(as).map((a) => [a.tool, a]));
      return list.map((tool) => {
        const a = availability.get(tool.tool);
        return { ...tool, available: a?.available ?? false, ...(a?.reason ? { reason: a.reason } : {}) };
      });
    },

    toolCallers() {
      const listeners = new Set(state.config.listeners.map((l) => l.name));
      return state.tools.runtime.dispatcher
        .listenerNames()
        .map((name) => ({ name, mcpIdentity: name === MCP_IDENTITY && !listeners.has(name) }));
    },

    async callTool(call: ApiToolCall) {
      const thread = `api-${randomUUID()}`;
      const callId = randomUUID();
      // In the thread history as a listener's call is (invariant 1), approval records between them.
      const record = (id: string, from: string, to: string, kind: MessageKind, payload: string) =>
        state.history.append(thread, {
          id,
          from,
          to,
          kind,
          payload: knownSecrets.redact(payload),
          time: Date.now(),
        });
      record(callId, call.as, call.tool, 'tool-call', toolCallXml(call.tool, call.args));
      // The bus's own ToolPort: the dispatcher in force, kept alive across a reload while it runs.
      const result = await state.tools.call({
        tool: call.tool,
        args: call.args,
        listener: call.as,
        thread,
        callId,
        by: call.by,
        ...(call.scope ? { scope: call.scope } : {}),
      });
      record(`${callId}.result`, call.tool, call.as, 'tool-result', toolResultXml(result));
      return { thread, result };
    },

    async auditFile(): Promise<string> {
      await state.auditLog.flush().catch(() => {});
      return state.auditLog.path;
    },

    admission(): ServerError | undefined {
      if (state.stopping) return new ServerError('server.overloaded', new ShuttingDownError().message);
      const pending = state.historyLog?.pending ?? 0;
      if (pending > MAX_HISTORY_BACKLOG) {
        return new ServerError(
          'server.overloaded',
          'the thread history is behind writing to disk; retry later',
          {
            retryAfterSeconds: 2,
          },
        );
      }
      return undefined;
    },

    sampleMetrics(): void {
      const stats = state.bus.stats();
      const queues: Record<string, { depth: number; active: number; paused: boolean }> = {};
      for (const [name, q] of Object.entries(stats.queues)) {
        queues[name] = { ...q, paused: state.bus.listenerState(name)?.paused ?? false };
      }
      sampleBusGauges({ ...stats, queues }, state.historyLog?.pending ?? 0, state.streamClients());
      feedTokens(state.agents);
    },

    async deadLetters(query: DeadLetterQuery): Promise<DeadLetterPage> {
      const redis = state.redisBus;
      // The in-memory transport never redelivers, so it never dead-letters.
      if (!redis) return { dead_letters: [], total: 0, next: null };
      // One more than asked says whether there is a next page.
      const [letters, total] = await Promise.all([
        redis.deadLetters(query.limit + 1, query.cursor),
        redis.deadLetterCount(),
      ]);
      const page = letters.slice(0, query.limit).map(
        (d): DeadLetterView => ({
          id: d.id,
          time: d.time,
          listener: d.listener,
          message: d.message?.id ?? null,
          thread: d.message?.thread ?? null,
          from: d.message?.from ?? null,
          tag: d.message?.tag ?? null,
          deliveries: d.deliveries,
          reason: d.reason,
          consumer: d.consumer,
        }),
      );
      const next = letters.length > query.limit ? (page[page.length - 1]?.id ?? null) : null;
      return { dead_letters: page, total, next };
    },

    async mcp() {
      // Built on first use and kept; it reads the state afresh each time, so a reload shows through.
      // Imported then too (with its sessions, subscriptions and thread notices): a daemon no MCP
      // client talks to never loads it.
      const { McpHost } = await import('../mcp/server/host.ts');
      mcpHost ??= new McpHost({
        bus: state.bus,
        listeners: () => state.loaded.listeners,
        tools: () => state.tools.runtime,
        config: () => state.config,
        channels: state.clientChannels,
      });
      return mcpHost;
    },
  };
}

/**
 * organism_llm_tokens_total from the agents' own usage counters: at each scrape, what each agent
 * used since the last one is added. A reload brings a fresh tracker (counting from 0 again); the
 * counter itself never goes back, as Prometheus counters must not.
 */
function llmTokenFeeder(): (agents: AgentRuntime) => void {
  let tracker: AgentRuntime['usage'] | undefined;
  const seen = new Map<string, number>();
  return (agents) => {
    if (agents.usage !== tracker) {
      tracker = agents.usage;
      seen.clear();
    }
    for (const listener of agents.agents) {
      const totals = agents.usage.agent(listener);
      for (const [direction, now] of [
        ['input', totals.input_tokens],
        ['output', totals.output_tokens],
      ] as const) {
        const key = `${listener}\u0000${direction}`;
        const before = seen.get(key) ?? 0;
        if (now > before) metrics.llmTokens.inc({ listener, direction }, now - before);
        seen.set(key, now);
      }
    }
  };
}
