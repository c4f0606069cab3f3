/**
 * The daemon's one call into this folder: gives every `agent: true` listener without a handler
 * module its definition (the LLM loop) and one usage counter. Agents without `llm:` settings of
 * their own share one LLM client; one with its own gets its own client on the same backends, so
 * rate limits still hold across agents.
 */
import type { MessageView } from '../bus/message.ts';
import type { LoadedOrganism } from '../config/index.ts';
import type { ClientChannels } from '../mcp/server/client-channel.ts';
import { loadNativeTools } from '../tools/catalog.ts';
import { LlmBackends } from './backends.ts';
import { LlmClient } from './client.ts';
import { AGENT_TASK_SCHEMA, createAgentDefinition, type PeerInfo, type ToolInfo } from './definition.ts';
import type { AgentLoopOptions, LlmClientOptions } from './options.ts';
import type { RecordFn } from './record.ts';
import type { AgentLogger } from './types.ts';
import { type UsageStats, UsageTracker } from './usage.ts';

export interface AttachAgentsOptions {
  logger: AgentLogger;
  env?: NodeJS.ProcessEnv;
  /** The thread's messages so far (the bus's history). */
  history?: (thread: string) => readonly MessageView[] | undefined;
  /** Appends to the thread's history (the agents' model-turn records, for resuming after a restart). */
  record?: RecordFn;
  /** Tool descriptions; default: the native tools found in tools/ and librarian/tools/. */
  tools?: (name: string) => ToolInfo | undefined;
  llmOptions?: Partial<LlmClientOptions>;
  /** The daemon's MCP clients by thread: an mcp-sampling backend asks the one that started a thread. */
  clientChannels?: ClientChannels;
  loopOptions?: Partial<AgentLoopOptions>;
}

export interface AgentRuntime {
  /** Names of the agents given a definition. */
  agents: string[];
  /** The organism-wide client, shared by agents without llm: settings of their own; undefined when none is. */
  llm: LlmClient | undefined;
  /** Each agent's client by agent name. */
  clients: Map<string, LlmClient>;
  usage: UsageTracker;
  /** Token usage per agent and per thread. */
  stats(): UsageStats;
}

export async function attachAgents(
  loaded: LoadedOrganism,
  options: AttachAgentsOptions,
): Promise<AgentRuntime> {
  const usage = new UsageTracker();
  const runtime: AgentRuntime = {
    agents: [],
    llm: undefined,
    clients: new Map(),
    usage,
    stats: () => usage.stats(),
  };
  const agents = loaded.listeners.filter((l) => l.config.agent && !l.definition);
  if (agents.length === 0) return runtime;

  const backends = new LlmBackends(loaded.config.llm, {
    env: options.env ?? process.env,
    logger: options.logger,
    ...(options.llmOptions ? { options: options.llmOptions } : {}),
    ...(options.clientChannels ? { clientChannels: options.clientChannels } : {}),
  });
  // Built (and its "agents use" line logged) only when some agent asks it.
  let shared: LlmClient | undefined;
  const clientOf = (agent: (typeof agents)[number]['config']): LlmClient => {
    if (!hasOwnSettings(agent.llm)) {
      shared ??= LlmClient.forAgent(backends);
      return shared;
    }
    return LlmClient.forAgent(backends, agent);
  };
  let tools = options.tools;
  if (!tools && agents.some((a) => a.config.tools.length > 0)) {
    const byName = new Map((await loadNativeTools()).map((t) => [t.name, t]));
    tools = (name) => byName.get(name);
  }
  const byName = new Map(loaded.listeners.map((l) => [l.config.name, l]));
  const peers = (name: string): PeerInfo | undefined => {
    const peer = byName.get(name);
    if (!peer) return undefined;
    const description = peer.config.description;
    // An agent peer is known by its config alone: its definition may not be built yet.
    if (peer.config.agent && !peer.definition)
      return { description, schema: AGENT_TASK_SCHEMA, replies: true };
    if (!peer.definition) return undefined;
    return {
      description,
      schema: peer.definition.payload.schema,
      replies: peer.definition.response !== undefined,
    };
  };
  for (const agent of agents) {
    const llm = clientOf(agent.config);
    runtime.clients.set(agent.config.name, llm);
    agent.definition = createAgentDefinition(agent.config, {
      llm,
      tools: tools ?? (() => undefined),
      peers,
      usage,
      logger: options.logger,
      ...(options.history ? { history: options.history } : {}),
      ...(options.record ? { record: options.record } : {}),
      ...(options.loopOptions ? { options: options.loopOptions } : {}),
    });
    runtime.agents.push(agent.config.name);
  }
  runtime.llm = shared;
  return runtime;
}

function hasOwnSettings(llm: object | undefined): boolean {
  return llm !== undefined && Object.values(llm).some((v) => v !== undefined);
}
