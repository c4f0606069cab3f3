/**
 * `deliver {listener}`: one span per hop, the one span on the bus's hot path. It is a small record
 * rather than an SDK span: ids, the start and end time, the routing record it describes. Only a
 * sampled hop that finds room in the export queue becomes a ReadableSpan (what the SDK's OTLP
 * exporter takes), so a hop whose span is dropped, or not sampled, costs little more than its
 * traceparent. Its children (an agent's task, a tool call) are SDK spans under its context.
 */
import {
  type Context,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { contentAttribute, type SpanFactory, startAgent, startTool } from './spans.ts';
import { formatTraceparent } from './traceparent.ts';
import type { AgentSpan, HopMessage, HopOutcome, HopSpan, ToolSpan } from './types.ts';

/** Where finished hops go: the bounded export queue, and what every span of the daemon shares. */
export interface HopSink {
  readonly factory: SpanFactory;
  readonly resource: Resource;
  readonly scope: { name: string; version?: string };
  /** True when the export queue can take one more span; false counts the span as dropped. */
  admit(): boolean;
  /** Hands a finished span to the export queue (after admit()). */
  queue(span: ReadableSpan): void;
}

const TIME_ORIGIN = performance.timeOrigin;

export class Hop implements HopSpan {
  readonly #sink: HopSink;
  readonly #message: HopMessage;
  readonly #payload: string | undefined;
  readonly #traceId: string;
  readonly #spanId: string;
  readonly #parent: SpanContext | undefined;
  readonly #flags: number;
  readonly #start = performance.now();
  #traceparent: string | undefined;
  #context: Context | undefined;

  constructor(
    sink: HopSink,
    message: HopMessage,
    ids: { traceId: string; spanId: string; flags: number; parent: SpanContext | undefined },
    payloadXml: string | undefined,
  ) {
    this.#sink = sink;
    this.#message = message;
    this.#traceId = ids.traceId;
    this.#spanId = ids.spanId;
    this.#flags = ids.flags;
    this.#parent = ids.parent;
    this.#payload = payloadXml;
  }

  get traceparent(): string {
    this.#traceparent ??= formatTraceparent(this.#traceId, this.#spanId, this.#flags);
    return this.#traceparent;
  }

  get #children(): Context {
    this.#context ??= trace.setSpanContext(ROOT_CONTEXT, {
      traceId: this.#traceId,
      spanId: this.#spanId,
      traceFlags: this.#flags,
    });
    return this.#context;
  }

  agent(agent: string, thread: string): AgentSpan {
    return startAgent(this.#sink.factory, this.#children, agent, thread);
  }

  tool(tool: string, callId: string): ToolSpan {
    return startTool(this.#sink.factory, this.#children, tool, callId, this.#message.thread);
  }

  end(outcome: HopOutcome): void {
    if ((this.#flags & 1) === 0) return;
    const end = performance.now();
    const sink = this.#sink;
    if (!sink.admit()) return;
    sink.queue(this.#readable(outcome, end));
  }

  #readable(outcome: HopOutcome, end: number): ReadableSpan {
    const m = this.#message;
    const attributes: Record<string, string | number> = {
      'organism.thread': m.thread,
      'organism.from': m.from,
      'organism.to': m.to,
      'organism.tag': m.tag,
      'organism.kind': m.kind,
      'organism.hop': m.hop,
      'organism.message.id': m.id,
      'organism.outcome': outcome,
    };
    if (this.#sink.factory.captureContent && this.#payload !== undefined)
      attributes['organism.payload'] = contentAttribute(this.#payload);
    const context: SpanContext = { traceId: this.#traceId, spanId: this.#spanId, traceFlags: this.#flags };
    return {
      name: `deliver ${m.to}`,
      kind: SpanKind.CONSUMER,
      spanContext: () => context,
      ...(this.#parent ? { parentSpanContext: this.#parent } : {}),
      startTime: millisToHrTime(TIME_ORIGIN + this.#start),
      endTime: millisToHrTime(TIME_ORIGIN + end),
      duration: millisToHrTime(end - this.#start),
      status:
        outcome === 'ok' ? { code: SpanStatusCode.UNSET } : { code: SpanStatusCode.ERROR, message: outcome },
      attributes,
      links: [],
      events: [],
      ended: true,
      resource: this.#sink.resource,
      instrumentationScope: this.#sink.scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }
}
