/**
 * Real parts for the agent tests: a local HTTP server standing in for an LLM API (it records every
 * request and answers what the test says, in the provider's wire format), and a real bus with the
 * real tool dispatcher and the real calculate tool, with agents driven by the scripted provider.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { LlmClient } from '../../src/agent/client.ts';
import {
  AGENT_TASK_SCHEMA,
  type AgentDefinition,
  createAgentDefinition,
  type PeerInfo,
} from '../../src/agent/definition.ts';
import type { LlmClientOptions } from '../../src/agent/options.ts';
import { createScriptedProvider, type Script } from '../../src/agent/providers/scripted.ts';
import type { AgentLogger, CompletionRequest, Provider, ToolCallResult } from '../../src/agent/types.ts';
import { UsageTracker } from '../../src/agent/usage.ts';
import { Bus } from '../../src/bus/bus.ts';
import type { ThreadHistory } from '../../src/bus/history/index.ts';
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import type { ListenerConfig } from '../../src/config/types.ts';
import type { Verdict } from '../../src/guard/types.ts';
import { testConfig } from '../../src/testing/index.ts';
import { Dispatcher, type DispatcherOptions } from '../../src/tools/dispatcher.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { createToolServices } from '../../src/tools/services.ts';
import type { ToolDefinition } from '../../src/tools/types.ts';
import calculateTool from '../../tools/calculate.ts';
import { listenerSpec, settled, startBus, TEST_BUS, TEST_LIMITS, type TestListener } from '../helpers/bus.ts';

// ---------------------------------------------------------------- a local LLM API

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  /** Raw body text instead of json. */
  text?: string;
  /** Close the connection without answering (a network error). */
  hangUp?: boolean;
}

export interface FakeLlm {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeLlm(
  answer: (request: RecordedRequest, index: number) => FakeReply | Promise<FakeReply>,
): Promise<FakeLlm> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    let data = '';
    req.on('data', (chunk) => {
      data += chunk;
    });
    req.on('end', async () => {
      let body: unknown;
      try {
        body = JSON.parse(data);
      } catch {
        body = data;
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const reply = await answer(recorded, requests.length - 1);
      if (reply.hangUp) {
        req.socket.destroy();
        return;
      }
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.text ?? JSON.stringify(reply.json ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Client options for tests: no real waiting; every requested delay is recorded. */
export function recordingOptions(): Partial<LlmClientOptions> & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    requestTimeoutMs: 5_000,
  };
}

// ---------------------------------------------------------------- agents on a real bus

/** Wraps a provider so the test can read every request the loop made (what the model saw). */
export function recording(provider: Provider): Provider & { requests: CompletionRequest[] } {
  const requests: CompletionRequest[] = [];
  return {
    kind: provider.kind,
    model: provider.model,
    label: provider.label,
    requests,
    complete(request, signal) {
      requests.push(structuredClone(request));
      return provider.complete(request, signal);
    },
  };
}

export interface TestAgent {
  name: string;
  script?: Script;
  /** Instead of a script: a ready client (e.g. over a local provider server). */
  llm?: LlmClient;
  tools?: string[];
  peers?: string[];
  max_turns?: number;
  budget?: { tokens: number };
  prompt?: string;
  description?: string;
}

export interface AgentBus {
  bus: Bus;
  usage: UsageTracker;
  /** What each agent's model was asked, by agent name (scripted agents only). */
  requests: Record<string, CompletionRequest[]>;
  definitions: Record<string, AgentDefinition>;
  stop(): Promise<void>;
}

const ALLOW: Verdict = { verdict: 'allow', rule_id: null, reason: null, suggestion: null };

export function startAgentBus(setup: {
  agents: TestAgent[];
  listeners?: TestListener[];
  /** More tools beside calculate. */
  tools?: ToolDefinition[];
  /** Where the dispatcher writes its audit records (none by default). */
  audit?: DispatcherOptions['audit'];
  /** The agents' logger (silent by default). */
  logger?: AgentLogger;
  /**
   * A history for the bus to use (one that outlives it, as the one on disk does a restart); the
   * agents then record their model turns into it.
   */
  history?: ThreadHistory;
  /** Wraps each scripted agent's provider (to hold a model call in flight, say). */
  provider?: (agent: string, provider: Provider) => Provider;
}): AgentBus {
  const registry = new ToolRegistry();
  registry.register(calculateTool);
  for (const tool of setup.tools ?? []) registry.register(tool);
  const configs: Array<Partial<ListenerConfig> & { name: string }> = setup.agents.map((a) => ({
    name: a.name,
    description: a.description ?? `${a.name}, a test agent.`,
    agent: true,
    tools: a.tools ?? [],
    peers: a.peers ?? [],
    max_turns: a.max_turns ?? 10,
    ...(a.budget ? { budget: a.budget } : {}),
    ...(a.prompt ? { prompt: a.prompt } : {}),
  }));
  // A fresh data dir (created on first use): the effect log of side-effecting tools lives there.
  const { services, resources } = createToolServices(testConfig());
  const dispatcher = new Dispatcher({
    registry,
    listeners: [
      ...configs.map((c) => ({ name: c.name, tools: c.tools ?? [] })),
      ...(setup.listeners ?? []).map((l) => ({ name: l.name, tools: l.config?.tools ?? [] })),
    ],
    workspace: '/tmp',
    dataDir: '/tmp',
    guard: () => ALLOW,
    ...(setup.audit ? { audit: setup.audit } : {}),
    services,
  });
  const usage = new UsageTracker();
  const requests: Record<string, CompletionRequest[]> = {};
  const definitions: Record<string, AgentDefinition> = {};
  const codeListeners = new Map((setup.listeners ?? []).map((l) => [l.name, l]));
  const agentNames = new Set(setup.agents.map((a) => a.name));
  const peers = (name: string): PeerInfo | undefined => {
    if (agentNames.has(name))
      return { description: `${name}, a test agent.`, schema: AGENT_TASK_SCHEMA, replies: true };
    const l = codeListeners.get(name);
    if (!l) return undefined;
    return {
      description: l.definition.description ?? name,
      schema: l.definition.payload.schema,
      replies: l.definition.response !== undefined,
    };
  };
  let bus: Bus | undefined;
  const listeners: TestListener[] = setup.agents.map((agent, i) => {
    const config = testConfig({ listeners: [configs[i]!] }).listeners[0]!;
    let llm = agent.llm;
    if (!llm) {
      const provider = recording(createScriptedProvider({ script: agent.script ?? { scripts: [] } }));
      requests[agent.name] = provider.requests;
      const used = setup.provider ? setup.provider(agent.name, provider) : provider;
      llm = new LlmClient([{ provider: used }], { strategy: 'failover', retries: 0 });
    }
    const definition = createAgentDefinition(config, {
      llm,
      tools: (name) => registry.get(name)?.definition,
      peers,
      usage,
      history: (thread) => bus?.thread(thread)?.messages,
      ...(setup.history ? { record: (thread, entry) => setup.history!.append(thread, entry) } : {}),
      ...(setup.logger ? { logger: setup.logger } : {}),
    });
    definitions[agent.name] = definition;
    return { name: agent.name, definition, peers: config.peers, config };
  });
  const all = [...listeners, ...(setup.listeners ?? [])];
  if (setup.history) {
    bus = new Bus(all.map(listenerSpec), new MemoryTransport(), {
      limits: TEST_LIMITS,
      bus: TEST_BUS,
      logger: pino({ level: 'silent' }),
      tools: dispatcher,
      history: setup.history,
    });
    bus.start();
  } else bus = startBus(all, { tools: dispatcher });
  const started = bus;
  return {
    bus: started,
    usage,
    requests,
    definitions,
    stop: async () => {
      await started.stop(100);
      await resources.closeAll();
    },
  };
}

/** The `<answer>` payload the agent sent back to its caller. */
export function answerOf(
  messages: Array<{ from: string; kind: string; payload: string }>,
  agent: string,
): string {
  const answer = messages.filter((m) => m.from === agent && m.kind === 'response').at(-1);
  if (!answer)
    throw new Error(
      `${agent} sent no answer; thread:\n${messages.map((m) => `${m.from}->${m.kind}: ${m.payload}`).join('\n')}`,
    );
  return answer.payload;
}

/** Sends a task to `agent` and waits for the thread to settle. */
export async function ask(running: AgentBus, agent: string, task: string, thread?: string) {
  const { thread: id } = await running.bus.inject({
    to: agent,
    payload: `<${agent}><task>${task}</task></${agent}>`,
    ...(thread ? { thread } : {}),
  });
  const messages = await settled(running.bus, id);
  return { thread: id, messages, flow: messages.map((m) => `${m.from}->${m.to} ${m.kind}`) };
}

/** The results the model was handed in its request number `n` (the last tool message). */
export function resultsSeen(running: AgentBus, agent: string, n: number): ToolCallResult[] {
  const request = running.requests[agent]![n]!;
  const tool = request.messages.filter((m) => m.role === 'tool').at(-1);
  if (tool?.role !== 'tool') throw new Error('no tool message');
  return tool.results;
}
