/**
 * `deliver {listener}`: one span per hop, the one span on the bus's hot path. It is a small record
 * rather than an SDK span: ids, the start and end time, the routing record it describes. A sampled
 * hop that finds room in the export queue is written, as it ends, straight into the bytes of the
 * next OTLP export request (hop-batch.ts, wire.ts): no SDK span object is made or kept for it, so a
 * hop whose span is exported costs little more than one that is not. Its children (an agent's task,
 * a tool call) are SDK spans under its context.
 */
import { performance } from 'node:perf_hooks';
import { type Context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { HopTemplate, ParentKind } from './hop-template.ts';
import { SpanIds, type TraceIds } from './ids.ts';
import { contentAttribute, type SpanFactory, startAgent, startTool } from './spans.ts';
import { rememberOwn, type TraceParent } from './traceparent.ts';
import {
  type AgentSpan,
  HOP_OUTCOMES,
  type HopMessage,
  type HopOutcome,
  type HopSpan,
  type ToolSpan,
} from './types.ts';
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
  readonly #ids: SpanIds;
  /**
   * The parent's ids, none for a root: its bytes when it is a span of this process (SpanIds), else
   * its span id's hex; and whether it came from another process (flags bit 0x200).
   */
  readonly #parent: Pick<TraceParent, 'spanId'> | undefined;
  readonly #parentRemote: boolean;
  /** When it started (performance.now), for a sampled span only: an unsampled one is never written. */
  readonly #start: number;
  #end = 0;
  #outcome: HopOutcome = 'ok';
  #traceparent: string | undefined;
  #context: Context | undefined;

  constructor(
    sink: HopSink,
    message: HopMessage,
    ids: SpanIds,
    parent: Pick<TraceParent, 'spanId'> | undefined,
    parentRemote: boolean,
    payloadXml: string | undefined,
  ) {
    this.#sink = sink;
    this.#message = message;
    this.#ids = ids;
    this.#start = ids.flags === 0 ? 0 : performance.now();
    this.#parent = parent;
    this.#parentRemote = parentRemote;
    this.#payload = payloadXml;
  }

  get traceparent(): string {
    this.#traceparent ??= rememberOwn(this.#ids.traceparent(), this.#ids);
    return this.#traceparent;
  }

  get #children(): Context {
    const ids = this.#ids;
    this.#context ??= trace.setSpanContext(ROOT_CONTEXT, {
      traceId: ids.traceId,
      spanId: ids.spanId,
      traceFlags: ids.flags,
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
    if (this.#ids.flags === 0) return;
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
    const ids = this.#ids;
    const parent = this.#parent;
    const parentKind =
      parent === undefined ? ParentKind.None : parent instanceof SpanIds ? ParentKind.Own : ParentKind.Hex;
    const start = TIME_ORIGIN + this.#start;
    const end = TIME_ORIGIN + this.#end;
    const payload = this.#sink.factory.captureContent ? this.#payload : undefined;
    const template = ids.trace.hopTemplate;
    if (
      payload === undefined &&
      template?.writeAgain(w, m, this.#outcome, ids, parent, parentKind, this.#parentRemote, start, end)
    ) {
      return;
    }
    const begin = w.pos;
    w.ensure(64);
    w.bytes(ids.trace.field);
    const spanAt = w.pos + 1 - begin;
    w.id(ids.bytes, ids.at, 8);
    let parentAt = -1;
    if (parent instanceof SpanIds) {
      w.byte(0x22);
      parentAt = w.pos - begin;
      w.id(parent.bytes, parent.at, 8);
    } else if (parent !== undefined) {
      w.byte(0x22);
      parentAt = w.pos - begin;
      w.hex(parent.spanId);
    }
    const known = routeBytes(m);
    w.ensure(known.name.length + 32);
    w.bytes(known.name);
    const startAt = w.pos - begin;
    w.timeNanos(start);
    w.byte(0x41);
    w.timeNanos(end);
    const thread = threadAttribute(ids.trace, m.thread);
    w.ensure(thread.length + known.attributes.length);
    w.bytes(thread);
    w.bytes(known.attributes);
    // Past the attribute's tag, its length, its key, AnyValue's tag and length and value's tag:
    // the hop's varint, the id's length.
    const hopAt = w.pos - begin + 5 + KEY.hop.length;
    w.intAttribute(9, KEY.hop, m.hop);
    const idAt = w.pos - begin + 5 + KEY.id.length;
    w.stringAttribute(9, KEY.id, m.id);
    const outcome = OUTCOME[this.#outcome];
    if (payload !== undefined) {
      w.ensure(outcome.attribute.length);
      w.bytes(outcome.attribute);
      w.stringAttribute(9, KEY.payload, contentAttribute(payload));
      w.ensure(outcome.tail.length + 8);
      w.bytes(outcome.tail);
    } else {
      w.ensure(outcome.both.length + 8);
      w.bytes(outcome.both);
    }
    // flags (16, fixed32): the trace flags, and whether the parent came from another process.
    w.byte(0x85);
    w.byte(0x01);
    w.fixed32(ids.flags | HAS_IS_REMOTE | (this.#parentRemote ? IS_REMOTE : 0));
    if (payload === undefined) {
      ids.trace.hopTemplate = HopTemplate.of(
        w,
        begin,
        { span: spanAt, parent: parentAt, start: startAt, hop: hopAt, id: idAt },
        m,
        this.#outcome,
        parentKind,
        this.#parentRemote,
      );
    }
  }
}

/**
 * Per outcome, encoded once: its attribute, what follows the attributes up to the flags (the
 * dropped counts, 0, and the status: message, the outcome, and code ERROR, 2, unless ok, where code
 * UNSET, 0, is written as the SDK does), and both in one for a span with no payload between them.
 */
const OUTCOME = Object.fromEntries(
  HOP_OUTCOMES.map((outcome) => {
    const w = new Wire(128);
    w.stringAttribute(9, KEY.outcome, outcome);
    const attribute = Buffer.from(w.buf.subarray(0, w.pos));
    w.pos = 0;
    // dropped_attributes_count (10), dropped_events_count (12), dropped_links_count (14)
    for (const tag of [0x50, 0x60, 0x70]) {
      w.byte(tag);
      w.byte(0);
    }
    w.byte(0x7a);
    const status = w.open();
    if (outcome !== 'ok') {
      w.byte(0x12);
      w.string(outcome);
    }
    w.byte(0x18);
    w.byte(outcome === 'ok' ? 0 : 2);
    w.close(status);
    const tail = Buffer.from(w.buf.subarray(0, w.pos));
    return [outcome, { attribute, tail, both: Buffer.concat([attribute, tail]) }];
  }),
) as Record<HopOutcome, { attribute: Buffer; tail: Buffer; both: Buffer }>;

/**
 * The `organism.thread` attribute, encoded once per trace and thread: the hops of a thread share
 * its trace, and the trace keeps the encoding for the thread last written (one slot).
 */
function threadAttribute(trace: TraceIds, thread: string): Buffer {
  if (trace.threadAttribute === undefined || trace.thread !== thread) {
    const w = new Wire(thread.length * 3 + 32);
    w.stringAttribute(9, KEY.thread, thread);
    trace.threadAttribute = Buffer.from(w.buf.subarray(0, w.pos));
    trace.thread = thread;
  }
  return trace.threadAttribute;
}

/**
 * The span's name (and its kind after it) and four of its attributes (from, to, tag, kind),
 * encoded, for the route last written (one slot): hops along one route (a listener's messages to
 * another, of one tag) share them whatever their thread, and copying the bytes costs a fraction of
 * encoding them each time.
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
  // kind (6) and the tag of start_time_unix_nano (7, fixed64), which follows.
  w.byte(0x30);
  w.byte(KIND_CONSUMER);
  w.byte(0x39);
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
