/**
 * What the bus, the agent loop and the tool dispatcher see of tracing. Nothing here imports
 * OpenTelemetry: these are the shapes the code on the hot path holds, and with no `telemetry:`
 * section there is no Tracing at all (every hook is one `undefined` check). The implementation
 * (otel.ts) is imported only when the section is present (index.ts).
 */

/**
 * What became of a delivery (the bus's DeliveryOutcome, repeated so this file imports nothing); hop.ts
 * encodes each one's attribute once, from this list.
 */
export const HOP_OUTCOMES = ['ok', 'error', 'timeout', 'invalid', 'busy', 'dropped'] as const;
export type HopOutcome = (typeof HOP_OUTCOMES)[number];

/** The message a hop span describes: the routing record the runtime itself wrote. */
export interface HopMessage {
  id: string;
  /** The counter this process's nextId made `id` from, if it did (see Message.idCount). */
  idCount?: number | undefined;
  thread: string;
  from: string;
  to: string;
  tag: string;
  kind: string;
  hop: number;
}

/** The bus's handle on tracing. */
export interface Tracing {
  /** Whether prompts, arguments, results and payloads go into spans (capture_content). */
  readonly captureContent: boolean;
  /**
   * Starts `deliver {listener}` for one hop, as a child of the span that published the message
   * (`traceparent` from its envelope), or as the first span of its thread's trace.
   */
  hop(message: HopMessage, traceparent: string | undefined, payloadXml?: string): HopSpan;
  /** A traceparent from outside (the inject header) when it is a valid one, normalized; else undefined. */
  accept(traceparent: string | undefined): string | undefined;
}

/** A span other spans start under: a hop, or an agent's task. */
export interface TraceScope {
  /** W3C traceparent naming this span: what messages published under it carry. */
  readonly traceparent: string;
  /** `invoke_agent {agent}`: one run of an agent's loop in this hop. */
  agent(agent: string, thread: string): AgentSpan;
  /** `execute_tool {tool}`: one tool call through the dispatcher. */
  tool(tool: string, callId: string): ToolSpan;
}

export interface HopSpan extends TraceScope {
  end(outcome: HopOutcome): void;
}

export interface AgentSpan extends TraceScope {
  /** `chat {model}`: one model call of this task; the model is named when it has answered. */
  chat(request?: unknown): ChatSpan;
  /** The task's run is over (finished, suspended waiting for a peer, or failed). */
  end(status: string, error?: unknown): void;
}

export interface ChatSpan {
  /** `backend` is the client's `kind/model` label. */
  end(result: {
    backend?: string;
    usage?: { input: number; output: number };
    output?: unknown;
    error?: unknown;
  }): void;
}

/** The dispatcher's record of the call (the audit's fields), read when the span ends. */
export interface ToolCallOutcome {
  verdict: string | null;
  rule_id: string | null;
  outcome: string;
  code: string | null;
  /** The arguments as the audit records them (redacted). */
  input: unknown;
}

export interface ToolSpan {
  end(record: ToolCallOutcome, result?: unknown): void;
}

/**
 * The trace scope of a handler's context. The bus sets it on the DeliveryContext of a traced hop;
 * the agent loop swaps in its `invoke_agent` span while it runs, so the tool calls it makes are
 * that span's children. A symbol, so no handler meets it by accident.
 */
export const TRACE_SCOPE: unique symbol = Symbol.for('organism.trace-scope');

interface Scoped {
  [TRACE_SCOPE]?: TraceScope | undefined;
}

export function traceScopeOf(ctx: object): TraceScope | undefined {
  return (ctx as Scoped)[TRACE_SCOPE];
}

export function setTraceScope(ctx: object, scope: TraceScope | undefined): void {
  (ctx as Scoped)[TRACE_SCOPE] = scope;
}
