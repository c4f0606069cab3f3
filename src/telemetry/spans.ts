/**
 * The spans, after the OpenTelemetry GenAI semantic conventions: `deliver {listener}` per hop,
 * `invoke_agent {agent}` per run of an agent's loop, `chat {model}` per model call and
 * `execute_tool {tool}` per tool call. Each scope hands its children their parent and writes the
 * traceparent its messages carry. Content (payloads, prompts, arguments, results) is recorded only
 * with capture_content, redacted as the audit redacts.
 */
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { redact, redactString } from '../audit/redact.ts';
import { CONTENT_LIMIT } from './options.ts';
import { formatTraceparent } from './traceparent.ts';
import type { AgentSpan, ChatSpan, ToolCallOutcome, ToolSpan, TraceScope } from './types.ts';

const CONTENT_REDACT = { maxString: CONTENT_LIMIT, maxDepth: 16 };

/** Content as a span attribute: JSON (strings as they are), redacted, cut to CONTENT_LIMIT. */
export function contentAttribute(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = redactString(value);
  else {
    try {
      text = JSON.stringify(redact(value, CONTENT_REDACT)) ?? 'null';
    } catch {
      text = '[not serializable]';
    }
  }
  return text.length > CONTENT_LIMIT ? `${text.slice(0, CONTENT_LIMIT)}...[cut]` : text;
}

/** What every span of one daemon's tracing shares. */
export interface SpanFactory {
  readonly tracer: Tracer;
  readonly captureContent: boolean;
}

function errorType(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string')
    return error.code;
  return error instanceof Error ? error.name : 'error';
}

function fail(span: Span, error: unknown): void {
  span.setAttribute('error.type', errorType(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: redactString(error instanceof Error ? error.message : String(error)),
  });
}

/** An INTERNAL `{operation} {name}` span under `parent`, its gen_ai.operation.name set. */
function operationSpan(
  f: SpanFactory,
  parent: Context,
  operation: string,
  name: string,
  attributes: Attributes,
): Span {
  return f.tracer.startSpan(
    `${operation} ${name}`,
    { kind: SpanKind.INTERNAL, attributes: { 'gen_ai.operation.name': operation, ...attributes } },
    parent,
  );
}

/** `invoke_agent {agent}` under `parent`. */
export function startAgent(f: SpanFactory, parent: Context, agent: string, thread: string): AgentSpan {
  const span = operationSpan(f, parent, 'invoke_agent', agent, {
    'gen_ai.agent.name': agent,
    'gen_ai.conversation.id': thread,
  });
  return new AgentScope(f, span, thread);
}

/** `execute_tool {tool}` under `parent`. */
export function startTool(
  f: SpanFactory,
  parent: Context,
  tool: string,
  callId: string,
  thread: string,
): ToolSpan {
  const span = operationSpan(f, parent, 'execute_tool', tool, {
    'gen_ai.tool.name': tool,
    'gen_ai.tool.call.id': callId,
    'gen_ai.tool.type': 'function',
    'gen_ai.conversation.id': thread,
  });
  return new ToolCallSpan(f, span);
}

/** A scope backed by an SDK span (an agent's task). */
class Scope implements TraceScope {
  #traceparent: string | undefined;
  #context: Context | undefined;

  constructor(
    protected readonly f: SpanFactory,
    readonly span: Span,
    protected readonly thread: string,
  ) {}

  get traceparent(): string {
    if (this.#traceparent === undefined) {
      const c = this.span.spanContext();
      this.#traceparent = formatTraceparent(c.traceId, c.spanId, c.traceFlags);
    }
    return this.#traceparent;
  }

  /** The context its children start in. */
  protected get context(): Context {
    this.#context ??= trace.setSpan(ROOT_CONTEXT, this.span);
    return this.#context;
  }

  agent(agent: string, thread: string): AgentSpan {
    return startAgent(this.f, this.context, agent, thread);
  }

  tool(tool: string, callId: string): ToolSpan {
    return startTool(this.f, this.context, tool, callId, this.thread);
  }
}

class AgentScope extends Scope implements AgentSpan {
  #input = 0;
  #output = 0;
  #provider: string | undefined;
  #model: string | undefined;

  chat(request?: unknown): ChatSpan {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.conversation.id': this.thread,
    };
    if (this.f.captureContent && request && typeof request === 'object') {
      const { system, messages } = request as { system?: unknown; messages?: unknown };
      if (system !== undefined) attributes['gen_ai.system_instructions'] = contentAttribute(system);
      if (messages !== undefined) attributes['gen_ai.input.messages'] = contentAttribute(messages);
    }
    const span = this.f.tracer.startSpan('chat', { kind: SpanKind.CLIENT, attributes }, this.context);
    return {
      end: (result) => {
        if (result.backend !== undefined) {
          const slash = result.backend.indexOf('/');
          const provider = slash < 0 ? result.backend : result.backend.slice(0, slash);
          const model = slash < 0 ? result.backend : result.backend.slice(slash + 1);
          this.#provider = provider;
          this.#model = model;
          span.updateName(`chat ${model}`);
          span.setAttribute('gen_ai.provider.name', provider);
          span.setAttribute('gen_ai.request.model', model);
        }
        if (result.usage) {
          this.#input += result.usage.input;
          this.#output += result.usage.output;
          span.setAttribute('gen_ai.usage.input_tokens', result.usage.input);
          span.setAttribute('gen_ai.usage.output_tokens', result.usage.output);
        }
        if (this.f.captureContent && result.output !== undefined)
          span.setAttribute('gen_ai.output.messages', contentAttribute(result.output));
        if (result.error !== undefined) fail(span, result.error);
        span.end();
      },
    };
  }

  end(status: string, error?: unknown): void {
    const span = this.span;
    if (this.#provider !== undefined) span.setAttribute('gen_ai.provider.name', this.#provider);
    if (this.#model !== undefined) span.setAttribute('gen_ai.request.model', this.#model);
    span.setAttribute('gen_ai.usage.input_tokens', this.#input);
    span.setAttribute('gen_ai.usage.output_tokens', this.#output);
    span.setAttribute('organism.agent.status', status);
    if (error !== undefined) fail(span, error);
    else if (status === 'error' || status === 'budget' || status === 'max_turns')
      span.setStatus({ code: SpanStatusCode.ERROR, message: status });
    span.end();
  }
}

class ToolCallSpan implements ToolSpan {
  constructor(
    private readonly f: SpanFactory,
    private readonly span: Span,
  ) {}

  end(record: ToolCallOutcome, result?: unknown): void {
    const span = this.span;
    span.setAttribute('organism.tool.outcome', record.outcome);
    if (record.verdict !== null) span.setAttribute('organism.guard.verdict', record.verdict);
    if (record.rule_id !== null) span.setAttribute('organism.guard.rule_id', record.rule_id);
    if (record.code !== null) {
      span.setAttribute('organism.tool.code', record.code);
      span.setAttribute('error.type', record.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: record.code });
    }
    if (this.f.captureContent) {
      span.setAttribute('gen_ai.tool.call.arguments', contentAttribute(record.input));
      if (result !== undefined) span.setAttribute('gen_ai.tool.call.result', contentAttribute(result));
    }
    span.end();
  }
}
