/**
 * The provider-neutral conversation an agent loop keeps, and the one interface every LLM provider
 * implements. Providers translate this into their own wire format (Anthropic tool_use blocks,
 * OpenAI tool_calls, Ollama tool_calls) and back; nothing above providers/ knows any wire format.
 */
import type { JsonSchema } from '../xml/json-schema.ts';

/** A function the model may call: a granted tool or a peer. */
export interface FunctionSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonSchema;
}

/** One call the model asked for. */
export interface ToolCallRequest {
  /** The provider's call id (Anthropic, OpenAI) or one made up for providers without ids (Ollama). */
  id: string;
  name: string;
  /** Parsed arguments; undefined when `argsError` is set. */
  args: Record<string, unknown> | undefined;
  /** Why the arguments could not be read (OpenAI sends them as a JSON string that may not parse). */
  argsError?: string;
  /** The raw argument text as the model wrote it, when it came as text (kept to send back verbatim). */
  rawArgs?: string;
}

/** The answer to one call, already framed for the model. */
export interface ToolCallResult {
  callId: string;
  name: string;
  /** Framed, neutralized text the model reads (see frame.ts). */
  content: string;
  isError: boolean;
  /** The result as data, for the scripted provider's templates; never sent over the wire. */
  data?: unknown;
}

export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; text: string; toolCalls: ToolCallRequest[] }
  /** Answers to every call of the assistant turn before it, in the order of the calls. */
  | { role: 'tool'; results: ToolCallResult[] };

export interface TokenUsage {
  input: number;
  output: number;
}

/**
 * Sampling settings organism.yaml sets for an agent's calls (its `llm:` over the organism-wide one).
 * A provider sends only those that are set, so an unset one stays the provider's own default.
 */
export interface CallOptions {
  temperature?: number;
  topP?: number;
  /** Set only when organism.yaml sets max_tokens (OpenAI is sent it only then). */
  maxTokens?: number;
}

/** What the loop asks a provider for. */
export interface CompletionRequest {
  system: string;
  messages: readonly ChatMessage[];
  functions: readonly FunctionSpec[];
  /** Most tokens the reply may have. */
  maxTokens: number;
  /** Set by the LLM client from the agent's settings. */
  options?: CallOptions;
  /**
   * The thread the turn is for: `mcp-sampling` asks the MCP client that started it. Never sent
   * to a model API.
   */
  thread?: string;
}

/** One assistant turn as the provider returned it. */
export interface CompletionTurn {
  text: string;
  toolCalls: ToolCallRequest[];
  usage: TokenUsage;
  /** The provider's stop reason as given (end_turn, tool_use, stop, tool_calls, ...), for logs. */
  stopReason: string;
}

/**
 * One LLM backend. `complete` makes exactly one attempt: retries, failover and rate limits live
 * in the client (client.ts) so every provider gets the same behaviour. Errors are LlmError.
 */
export interface Provider {
  /** e.g. `anthropic`, `openai`, `ollama`, `openai-compatible`, `scripted`, `mcp-sampling`. */
  readonly kind: string;
  readonly model: string;
  /** `kind/model`, for logs and the answer's `backend` field. Never contains a key or URL secrets. */
  readonly label: string;
  /**
   * What it answers from, as a digest, for a provider whose answers come from content of its own
   * (the scripted provider's script): a reload compares it, so an edited script replaces the agent.
   */
  readonly fingerprint?: string;
  complete(request: CompletionRequest, signal: AbortSignal): Promise<CompletionTurn>;
}

/** The logging the agent runtime needs; a pino Logger fits. Never given a key or a prompt. */
export interface AgentLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}
