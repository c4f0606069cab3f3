/**
 * An `agent: true` listener from organism.yaml -> a ListenerDefinition the bus runs like any other.
 *
 * Payload: `<NAME><task>free text</task></NAME>` (NAME is the listener name, or its `payload`
 * override). Response: `<answer><text/><status/><turns/><backend/></answer>` where status is done,
 * max_turns, budget, error or busy.
 *
 * The model is offered one function per granted tool (its name, description and argument schema
 * from the tool registry) and one per peer: `ask_PEER` for a peer that replies (an agent, or a code
 * listener declaring a `response`), whose reply becomes the call's result; `tell_PEER` for one that
 * does not, whose result only says the message was sent.
 */
import type { MessageView } from '../bus/message.ts';
import type { ListenerConfig, LlmSection } from '../config/types.ts';
import { AgentConfigError } from '../errors.ts';
import {
  defineListener,
  type HandlerContext,
  type IncomingReply,
  type JsonSchema,
  type ListenerDefinition,
  type PayloadSpec,
} from '../listener/types.ts';
import { modelToolName } from '../mcp/names.ts';
import { LlmBackends } from './backends.ts';
import { LlmClient } from './client.ts';
import { AgentLoop } from './loop.ts';
import { type AgentLoopOptions, defaultAgentLoopOptions } from './options.ts';
import { type AgentFunction, buildSystemPrompt } from './prompt.ts';
import type { RecordFn } from './record.ts';
import type { AgentLogger } from './types.ts';
import { UsageTracker } from './usage.ts';

export const AGENT_TASK_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    task: { type: 'string', minLength: 1, maxLength: 100_000, description: 'What to do, in plain words.' },
  },
  required: ['task'],
  additionalProperties: false,
};

export const ANSWER_SPEC: PayloadSpec = {
  tag: 'answer',
  schema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: "The agent's final answer, or why it stopped." },
      status: { enum: ['done', 'max_turns', 'budget', 'error', 'busy'], description: 'How the task ended.' },
      turns: { type: 'integer', description: 'Model turns taken.' },
      backend: { type: 'string', description: 'provider/model that answered last.' },
    },
    required: ['text', 'status'],
  },
};

/** What the agent needs to know about a tool it is granted. */
export interface ToolInfo {
  description: string;
  args: JsonSchema;
  /** `native` or `external`; shown in the result's frame. Default native. */
  source?: string;
}

/** What the agent needs to know about a peer. */
export interface PeerInfo {
  description: string;
  /** The peer's payload schema: the arguments of its function. */
  schema: JsonSchema;
  /** True when the peer answers (agents; code listeners declaring a `response`). */
  replies: boolean;
}

export interface AgentDeps {
  /** The agent's client (shared, so rate limits hold across agents), or the `llm:` section to build one. */
  llm: LlmClient | LlmSection;
  tools: (name: string) => ToolInfo | undefined;
  peers: (name: string) => PeerInfo | undefined;
  /** The thread's messages so far, for a task arriving in a thread with earlier history. */
  history?: (thread: string) => readonly MessageView[] | undefined;
  /** Appends the agent's model-turn records to the thread, so its tasks resume after a restart. */
  record?: RecordFn;
  /** Shared usage counter; one is made when absent. */
  usage?: UsageTracker;
  logger?: AgentLogger;
  /** Environment for api_key_env / base_url_env when `llm` is a section. */
  env?: NodeJS.ProcessEnv;
  options?: Partial<AgentLoopOptions>;
}

export interface AgentDefinition extends ListenerDefinition<{ task: string }> {
  /** The functions offered to the model and the system prompt, as assembled (for describe/tests). */
  readonly functions: readonly AgentFunction[];
  readonly system: string;
  /** The LLM client's settings (LlmClient.settings): a reload that changes them replaces the agent. */
  readonly llmSettings: string;
  readonly usage: UsageTracker;
  /** Loops of this agent waiting for peer replies. */
  readonly waiting: () => number;
}

const SILENT: AgentLogger = { info() {}, warn() {}, debug() {} };

export function createAgentDefinition(listener: ListenerConfig, deps: AgentDeps): AgentDefinition {
  const logger = deps.logger ?? SILENT;
  const functions = agentFunctions(listener, deps);
  const system = buildSystemPrompt({
    name: listener.name,
    description: listener.description,
    prompt: listener.prompt,
    functions,
  });
  const llm =
    deps.llm instanceof LlmClient
      ? deps.llm
      : LlmClient.forAgent(
          new LlmBackends(deps.llm, {
            env: deps.env ?? process.env,
            ...(deps.logger ? { logger: deps.logger } : {}),
          }),
          // Its own llm: over the section, as the daemon builds it; none: the section as it is.
          listener.llm ? listener : undefined,
        );
  const usage = deps.usage ?? new UsageTracker();
  const loop = new AgentLoop({
    name: listener.name,
    system,
    functions,
    maxTurns: listener.max_turns,
    budgetTokens: listener.budget?.tokens,
    llm,
    usage,
    history: deps.history,
    record: deps.record,
    options: { ...defaultAgentLoopOptions(), ...deps.options },
    logger,
  });
  const definition = {
    description: listener.description,
    payload: { tag: listener.payload ?? listener.name, schema: AGENT_TASK_SCHEMA },
    response: ANSWER_SPEC,
    handler: (payload: { task: string }, ctx: HandlerContext) => loop.start(payload.task, ctx),
    onReply: (reply: IncomingReply, ctx: HandlerContext) => loop.reply(reply, ctx),
    functions,
    system,
    llmSettings: llm.settings,
    usage,
    waiting: () => loop.loops.size,
  };
  return defineListener(definition) as AgentDefinition;
}

/** Tools first (in grant order), then peers; names must not collide. */
export function agentFunctions(
  listener: ListenerConfig,
  deps: Pick<AgentDeps, 'tools' | 'peers'>,
): AgentFunction[] {
  const functions: AgentFunction[] = [];
  for (const name of listener.tools) {
    const tool = deps.tools(name);
    // A granted tool the registry does not know is not offered; a call to it is still refused by the dispatcher.
    if (!tool) continue;
    functions.push({
      kind: 'tool',
      // Providers accept [a-zA-Z0-9_-]{1,64}: `fs.read_file` is offered as `fs__read_file`.
      name: modelToolName(name),
      target: name,
      description: tool.description,
      parameters: objectSchema(tool.args),
      source: tool.source ?? 'native',
    });
  }
  for (const peer of listener.peers) {
    const info = deps.peers(peer);
    if (!info) throw new AgentConfigError(listener.name, `peer '${peer}' is not a listener of this organism`);
    const kind = info.replies ? 'ask' : 'tell';
    const description = info.replies
      ? `Consult ${peer}: ${info.description} Its reply comes back as the result of this call.`
      : `Send a message to ${peer}: ${info.description} It does not reply; the result only confirms the message was sent.`;
    functions.push({
      kind,
      name: `${kind}_${peer}`,
      target: peer,
      description,
      parameters: objectSchema(info.schema),
      source: 'peer',
    });
  }
  // Two functions under one name would send the model's call to whichever came first. MCP names
  // are mapped (`a._x` and `a_.x` both become `a___x`), so two tools can meet here too.
  const seen = new Map<string, AgentFunction>();
  for (const f of functions) {
    const first = seen.get(f.name);
    if (first)
      throw new AgentConfigError(
        listener.name,
        `${first.target} and ${f.target} would both be offered to the model as '${f.name}'; grant or name one otherwise`,
      );
    seen.set(f.name, f);
  }
  return functions;
}

/** Providers want an object schema for arguments; a schema without a type gets one. */
function objectSchema(schema: JsonSchema): JsonSchema {
  if (schema.type === 'object') return schema;
  return { type: 'object', properties: {}, ...schema };
}
