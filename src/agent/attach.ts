/**
 * The daemon's one call into this folder: gives every `agent: true` listener without a handler
 * module its definition (the LLM loop), all sharing one LLM client (so rate limits hold across
 * agents) and one usage counter.
 */
import type { MessageView } from '../bus/message.ts';
import type { LoadedOrganism } from '../config/index.ts';
import { loadNativeTools } from '../tools/catalog.ts';
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
  loopOptions?: Partial<AgentLoopOptions>;
}

export interface AgentRuntime {
  /** Names of the agents given a definition. */
  agents: string[];
  /** Undefined when the organism has no agents. */
  llm: LlmClient | undefined;
  usage: UsageTracker;
  /** Token usage per agent and per thread. */
  stats(): UsageStats;
}

export async function attachAgents(
  loaded: LoadedOrganism,
  options: AttachAgentsOptions,
): Promise<AgentRuntime> {
  const usage = new UsageTracker();
  const runtime: AgentRuntime = { agents: [], llm: undefined, usage, stats: () => usage.stats() };
  const agents = loaded.listeners.filter((l) => l.config.agent && !l.definition);
  if (agents.length === 0) return runtime;

  const llm = LlmClient.fromConfig(loaded.config.llm, {
    env: options.env ?? process.env,
    logger: options.logger,
    ...(options.llmOptions ? { options: options.llmOptions } : {}),
  });
  runtime.llm = llm;
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
  return runtime;
}
