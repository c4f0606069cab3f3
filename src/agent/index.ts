/** LLM agents: the loop, prompt assembly, framing, usage, and the providers. Internal API. */

export { type Answer, type AnswerStatus, answerPayload } from './answer.ts';
export { type AgentRuntime, type AttachAgentsOptions, attachAgents } from './attach.ts';
export { type BackendStatus, type CreateLlmClientOptions, type LlmBackend, LlmClient } from './client.ts';
export {
  AGENT_TASK_SCHEMA,
  type AgentDefinition,
  type AgentDeps,
  ANSWER_SPEC,
  agentFunctions,
  createAgentDefinition,
  type PeerInfo,
  type ToolInfo,
} from './definition.ts';
export { frameHistory, framePeerReply, frameTask, frameToolResult, neutralize } from './frame.ts';
export {
  type AgentLoopOptions,
  defaultAgentLoopOptions,
  defaultLlmClientOptions,
  type LlmClientOptions,
} from './options.ts';
export { type AgentFunction, buildSystemPrompt, PREAMBLE } from './prompt.ts';
export {
  BUILTIN_SCRIPT,
  createAnthropicProvider,
  createBackend,
  createOllamaProvider,
  createOpenAiProvider,
  createScriptedProvider,
  type Script,
  type ScriptEntry,
  type ScriptTurn,
} from './providers/index.ts';
export { estimateTokens, TokenBucket } from './rate-limit.ts';
export { backoffDelay, withRetries } from './retry.ts';
export type * from './types.ts';
export { type UsageStats, type UsageTotals, UsageTracker } from './usage.ts';
