/**
 * `deliver {listener}`: one span per hop, the one span on the bus's hot path. It is a small record
 * rather than an SDK span: ids, the start and end time, the routing record it describes. A sampled
 * hop that finds room in the export queue is written, as it ends, straight into the bytes of the
 * next OTLP export request (hop-batch.ts, wire.ts): no SDK span object is made or kept for it, so a
 * hop whose span is exported costs little more than one that is not. Its children (an agent's task,
 * a tool call) are SDK spans under its context.
 */
import { type Context, ROOT_CONTEXT, type SpanContext, trace } from '@opentelemetry/api';
import { contentAttribute, type SpanFactory, startAgent, startTool } from './spans.ts';
import { ownTraceparent } from './traceparent.ts';
import type { AgentSpan, HopMessage, HopOutcome, HopSpan, ToolSpan } from './types.ts';
import { keyBytes, Wire, type WireSpan } from './wire.ts';

/** Where finished hops go: the bounded export queue, and what every span of the daemon shares. */
export interface HopSink {
  readonly factory: SpanFactory;
  /** True when the export queue can take one more span; false counts the span as dropped. */
  admit(): boolean;
  /** Hands a finished span to the export queue (after admit()). */
  queue(span: WireSpan): void;
}

const TIME_ORIGIN = performance.timeOrigin;

/** The attribute keys, encoded once. */
const KEY = {
  thread: keyBytes('organism.thread'),
  from: keyBytes('organism.from'),
  to: keyBytes('organism.to'),
  tag: keyBytes('organism.tag'),
  kind: keyBytes('organism.kind'),
  hop: keyBytes('organism.hop'),
  id: keyBytes('organism.message.id'),
  outcome: keyBytes('organism.outcome'),
  payload: keyBytes('organism.payload'),
};
/** `deliver ` as the start of Span.name. */
const DELIVER = 'deliver ';
/** Span.kind CONSUMER in the protocol's numbering (the API's SpanKind.CONSUMER + 1). */
const KIND_CONSUMER = 5;
/** Span.flags bits: the parent's is_remote is known (0x100), and true (0x200). */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

export class Hop implements HopSpan, WireSpan {
  readonly #sink: HopSink;
  readonly #message: HopMessage;
  readonly #payload: string | undefined;
  readonly #traceId: string;
  readonly #spanId: string;
  /** The parent's span id and whether it came from another process (flags bit 0x200); none for a root. */
  readonly #parentSpanId: string | undefined;
  readonly #parentRemote: boolean;
  readonly #flags: number;
  readonly #start = performance.now();
  #end = 0;
  #outcome: HopOutcome = 'ok';
  #traceparent: string | undefined;
  #context: Context | undefined;

  constructor(
    sink: HopSink,
    message: HopMessage,
    /** Read here, not kept: the caller may hand the same object to every hop. */
    ids: {
      traceId: string;
      spanId: string;
      flags: number;
      parent: Pick<SpanContext, 'spanId' | 'isRemote'> | undefined;
    },
    payloadXml: string | undefined,
  ) {
    this.#sink = sink;
    this.#message = message;
    this.#traceId = ids.traceId;
    this.#spanId = ids.spanId;
    this.#flags = ids.flags;
    this.#parentSpanId = ids.parent?.spanId;
    this.#parentRemote = ids.parent?.isRemote === true;
    this.#payload = payloadXml;
  }

  get traceparent(): string {
    this.#traceparent ??= ownTraceparent(this.#traceId, this.#spanId, this.#flags);
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
    this.#end = performance.now();
    this.#outcome = outcome;
    const sink = this.#sink;
    if (!sink.admit()) return;
    sink.queue(this);
  }

  /**
   * The Span message, fields in the SDK serializer's order: ids, parent, name, kind, times, the
   * routing record's attributes, the dropped counts (0), status, flags.
   */
  writeTo(w: Wire): void {
    const m = this.#message;
    w.ensure(64);
    w.byte(0x0a);
    w.hex(this.#traceId);
    w.byte(0x12);
    w.hex(this.#spanId);
    if (this.#parentSpanId !== undefined) {
      w.byte(0x22);
      w.hex(this.#parentSpanId);
    }
    const known = routeBytes(m);
    w.ensure(known.name.length + 32);
    w.bytes(known.name);
    w.byte(0x30);
    w.byte(KIND_CONSUMER);
    w.byte(0x39);
    w.timeNanos(TIME_ORIGIN + this.#start);
    w.byte(0x41);
    w.timeNanos(TIME_ORIGIN + this.#end);
    w.stringAttribute(9, KEY.thread, m.thread);
    w.ensure(known.attributes.length);
    w.bytes(known.attributes);
    w.intAttribute(9, KEY.hop, m.hop);
    w.stringAttribute(9, KEY.id, m.id);
    w.stringAttribute(9, KEY.outcome, this.#outcome);
    if (this.#sink.factory.captureContent && this.#payload !== undefined)
      w.stringAttribute(9, KEY.payload, contentAttribute(this.#payload));
    w.ensure(32 + this.#outcome.length);
    // dropped_attributes_count (10), dropped_events_count (12), dropped_links_count (14)
    w.byte(0x50);
    w.byte(0);
    w.byte(0x60);
    w.byte(0);
    w.byte(0x70);
    w.byte(0);
    // status (15): message (2) and code ERROR (2) unless ok; code UNSET (0) written as the SDK does.
    w.byte(0x7a);
    const status = w.open();
    if (this.#outcome !== 'ok') {
      w.byte(0x12);
      w.string(this.#outcome);
    }
    w.byte(0x18);
    w.byte(this.#outcome === 'ok' ? 0 : 2);
    w.close(status);
    // flags (16, fixed32): the trace flags, and whether the parent came from another process.
    w.byte(0x85);
    w.byte(0x01);
    w.fixed32((this.#flags & 0xff) | HAS_IS_REMOTE | (this.#parentRemote ? IS_REMOTE : 0));
  }
}

/**
 * The span's name and four of its attributes (from, to, tag, kind), encoded, for the route last
 * written (one slot): hops along one route (a listener's messages to another, of one tag) share
 * them whatever their thread, and copying the bytes costs a fraction of encoding them each time.
 */
const lastRoute = {
  from: '',
  to: '',
  tag: '',
  kind: '',
  name: Buffer.alloc(0),
  attributes: Buffer.alloc(0),
};

function routeBytes(m: HopMessage): typeof lastRoute {
  const r = lastRoute;
  if (m.from === r.from && m.to === r.to && m.tag === r.tag && m.kind === r.kind) return r;
  const w = new Wire(256);
  w.byte(0x2a);
  w.string(DELIVER + m.to);
  r.name = Buffer.from(w.buf.subarray(0, w.pos));
  w.pos = 0;
  w.stringAttribute(9, KEY.from, m.from);
  w.stringAttribute(9, KEY.to, m.to);
  w.stringAttribute(9, KEY.tag, m.tag);
  w.stringAttribute(9, KEY.kind, m.kind);
  r.attributes = Buffer.from(w.buf.subarray(0, w.pos));
  r.from = m.from;
  r.to = m.to;
  r.tag = m.tag;
  r.kind = m.kind;
  return r;
}
