/**
 * Hop spans are written as OTLP protobuf by hand (src/telemetry/wire.ts): the request they make must
 * be, byte for byte, what the SDK's ProtobufTraceSerializer makes of the same span, with and
 * without a parent, for every outcome, and with a captured payload long and non-ASCII enough that
 * its lengths take several bytes.
 */
import { type SpanContext, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lastIdCount, nextId } from '../../src/bus/ids.ts';
import { Hop, type HopSink } from '../../src/telemetry/hop.ts';
import { newSpanIds, SpanIds, TraceIds } from '../../src/telemetry/ids.ts';
import { contentAttribute } from '../../src/telemetry/spans.ts';
import { formatTraceparent, parseTraceparent } from '../../src/telemetry/traceparent.ts';
import type { HopMessage, HopOutcome } from '../../src/telemetry/types.ts';
import { requestHeader, Wire, type WireSpan } from '../../src/telemetry/wire.ts';
import { decodeTraceRequest } from './support/otlp-proto.ts';

const resource = resourceFromAttributes({
  'service.name': 'wire-test',
  'service.instance.id': '6f1c2b9e-0d4a-4c3e-9b7a-2f8e5d1c0a9b',
  'service.version': '1.2.3',
});
const scope = { name: 'organism', version: '1.2.3' };
const MESSAGE: HopMessage = {
  id: '0195f1c2-aaaa-7bbb-8ccc-123456789abc',
  thread: '0195f1c2-aaaa-7bbb-8ccc-123456789abd',
  from: 'greeter',
  to: 'shouter',
  tag: 'greeting',
  kind: 'message',
  hop: 300,
};
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const PARENT: SpanContext = { traceId: TRACE, spanId: 'a3ce929d0e0e4736', traceFlags: 1, isRemote: true };

afterEach(() => {
  vi.restoreAllMocks();
});

/** Ids as a hop span of this process holds them, for a span id given in hex. */
function own(traceId: string, spanId: string): SpanIds {
  return SpanIds.of(new TraceIds(traceId), spanId, 1);
}

/**
 * The request our encoder writes for one hop, started at `start` and ended at `end` (performance.now).
 * The parent is written from its hex, or from its bytes when it is `own` (a hop span of this process).
 * `ids`: the hop's own (by default a trace of its own); the span goes after other bytes, as in a batch.
 */
function ours(
  outcome: HopOutcome,
  times: [number, number],
  parent: SpanContext | undefined,
  captureContent: boolean,
  payload?: string,
  message = MESSAGE,
  ownParent = false,
  ids = own(TRACE, SPAN),
): Buffer {
  const clock = vi.spyOn(performance, 'now');
  clock.mockReturnValueOnce(times[0]).mockReturnValueOnce(times[1]);
  let queued: WireSpan | undefined;
  const sink: HopSink = {
    factory: { tracer: undefined as never, captureContent },
    admit: () => true,
    queue: (span) => {
      queued = span;
    },
  };
  const written = parent && ownParent ? SpanIds.of(ids.trace, parent.spanId, 1) : parent;
  new Hop(sink, message, ids, written, parent?.isRemote === true, payload).end(outcome);
  clock.mockRestore();
  const w = new Wire(64);
  w.byte(0x12);
  const at = w.openWide();
  queued!.writeTo(w);
  w.closeWide(at);
  const spans = w.buf.subarray(0, w.pos);
  return Buffer.concat([requestHeader(resource, scope, spans.length), spans]);
}

/** The SDK's request for the same span. */
function sdk(
  outcome: HopOutcome,
  times: [number, number],
  parent: SpanContext | undefined,
  payload?: string,
  message = MESSAGE,
  spanId = SPAN,
): Buffer {
  const attributes: Record<string, string | number> = {
    'organism.thread': message.thread,
    'organism.from': message.from,
    'organism.to': message.to,
    'organism.tag': message.tag,
    'organism.kind': message.kind,
    'organism.hop': message.hop,
    'organism.message.id': message.id,
    'organism.outcome': outcome,
  };
  if (payload !== undefined) attributes['organism.payload'] = contentAttribute(payload);
  const context = { traceId: TRACE, spanId, traceFlags: 1 };
  const span: ReadableSpan = {
    name: `deliver ${message.to}`,
    kind: SpanKind.CONSUMER,
    spanContext: () => context,
    ...(parent ? { parentSpanContext: parent } : {}),
    startTime: millisToHrTime(performance.timeOrigin + times[0]),
    endTime: millisToHrTime(performance.timeOrigin + times[1]),
    duration: millisToHrTime(times[1] - times[0]),
    status:
      outcome === 'ok' ? { code: SpanStatusCode.UNSET } : { code: SpanStatusCode.ERROR, message: outcome },
    attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
  return Buffer.from(ProtobufTraceSerializer.serializeRequest([span])!);
}

describe('a hop span on the wire', () => {
  it('is the SDK serializer’s bytes: root and child, ok and every failed outcome', () => {
    const times: [number, number] = [1234.567891, 1301.000004];
    for (const parent of [undefined, PARENT, { ...PARENT, isRemote: false }])
      for (const outcome of ['ok', 'error', 'timeout', 'invalid', 'busy', 'dropped'] as const) {
        expect(ours(outcome, times, parent, false).toString('hex')).toBe(
          sdk(outcome, times, parent).toString('hex'),
        );
        // The parent a hop span of this process: its span id copied from its bytes.
        expect(ours(outcome, times, parent, false, undefined, MESSAGE, true).toString('hex')).toBe(
          sdk(outcome, times, parent).toString('hex'),
        );
      }
  });

  it('writes the thread of each hop, when hops of one trace change threads', () => {
    const trace = new TraceIds(TRACE);
    for (const thread of [MESSAGE.thread, 'other', 'other', MESSAGE.thread]) {
      const message = { ...MESSAGE, thread };
      let queued: WireSpan | undefined;
      const sink: HopSink = {
        factory: { tracer: undefined as never, captureContent: false },
        admit: () => true,
        queue: (span) => {
          queued = span;
        },
      };
      const hop = new Hop(sink, message, newSpanIds(trace, 1), PARENT, true, undefined);
      hop.end('ok');
      const w = new Wire(64);
      w.byte(0x12);
      const at = w.open();
      queued!.writeTo(w);
      w.close(at);
      const bytes = Buffer.concat([requestHeader(resource, scope, w.pos), w.buf.subarray(0, w.pos)]);
      const [span] = decodeTraceRequest(bytes).resourceSpans[0]!.scopeSpans[0]!.spans;
      const attrs = Object.fromEntries(span!.attributes.map((a: any) => [a.key, a.value]));
      expect(attrs['organism.thread'].stringValue).toBe(thread);
      expect(span!.traceId).toBe(TRACE);
      expect(span!.spanId).toBe(hop.traceparent.slice(36, 52));
    }
  });

  it('is the SDK serializer’s bytes with a captured payload of over 16 KB of UTF-8 (cut at 8,192 characters)', () => {
    const payload = `<note><text>Grüße, Ada! ${'✓'.repeat(9000)}</text></note>`;
    const times: [number, number] = [5.5, 7.25];
    const bytes = ours('ok', times, PARENT, true, payload);
    expect(bytes.length).toBeGreaterThan(16_384); // lengths of three bytes, moved into place
    expect(bytes.toString('hex')).toBe(sdk('ok', times, PARENT, payload).toString('hex'));
    // And a collector reads it back: the payload whole (as cut), the ids and the parent.
    const [span] = decodeTraceRequest(bytes).resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(span!.traceId).toBe(TRACE);
    expect(span!.parentSpanId).toBe(PARENT.spanId);
    const attrs = Object.fromEntries(span!.attributes.map((a: any) => [a.key, a.value]));
    expect(attrs['organism.payload'].stringValue).toBe(contentAttribute(payload));
    expect(attrs['organism.hop'].intValue).toBe('300');
  });

  it('is the SDK serializer’s bytes for hops of other routes in turn (the encoded route is not reused for another)', () => {
    const times: [number, number] = [10.5, 11.25];
    const routes: HopMessage[] = [
      MESSAGE,
      { ...MESSAGE, to: 'greeter', from: 'shouter' },
      { ...MESSAGE, tag: 'shout' },
      { ...MESSAGE, kind: 'response', thread: '0195f1c2-aaaa-7bbb-8ccc-000000000001' },
      { ...MESSAGE, from: 'grüße' },
      MESSAGE,
    ];
    for (const route of routes) {
      expect(ours('ok', times, PARENT, false, undefined, route).toString('hex')).toBe(
        sdk('ok', times, PARENT, undefined, route).toString('hex'),
      );
    }
  });

  it('writes a nested length in as few bytes as it needs, whatever was reserved for it (openWide)', () => {
    for (const size of [0, 1, 127, 128, 300, 16_383, 16_384, 70_000, 2_100_000]) {
      const content = Buffer.alloc(size, 7);
      const narrow = new Wire(16);
      narrow.byte(0x12);
      const at = narrow.open();
      narrow.ensure(size);
      narrow.bytes(content);
      narrow.close(at);
      const wide = new Wire(16);
      wide.byte(0x12);
      const wat = wide.openWide();
      wide.ensure(size);
      wide.bytes(content);
      wide.closeWide(wat);
      expect(wide.pos, String(size)).toBe(narrow.pos);
      expect(
        Buffer.compare(wide.buf.subarray(0, wide.pos), narrow.buf.subarray(0, narrow.pos)),
        String(size),
      ).toBe(0);
    }
  });

  it('writes the times of spans of one second and the next exactly (each second’s part made once)', () => {
    // A second whose nanoseconds' low 32 bits are near 2^32: its spans' nanoseconds carry into
    // the high half, past some point of the second.
    let second = Math.ceil(performance.timeOrigin / 1000) + 1;
    while ((BigInt(second) * 1_000_000_000n) % 2n ** 32n < 2n ** 32n - 500_000_000n) second++;
    const base = second * 1000 - performance.timeOrigin;
    for (const at of [0.000001, 1.5, 499.999999, 500.000001, 600.25, 999.999999, 1000.000001, 1500.5]) {
      const times: [number, number] = [base + at - 0.25, base + at];
      const bytes = ours('ok', times, undefined, false);
      const [span] = decodeTraceRequest(bytes).resourceSpans[0]!.scopeSpans[0]!.spans;
      for (const [field, time] of [
        ['startTimeUnixNano', times[0]],
        ['endTimeUnixNano', times[1]],
      ] as const) {
        const [s, n] = millisToHrTime(performance.timeOrigin + time);
        expect(BigInt(span![field]), `${field} at ${at}`).toBe(BigInt(s) * 1_000_000_000n + BigInt(n));
      }
    }
  });

  it('names itself in its traceparent as formatTraceparent writes it, read back as its own ids', () => {
    const sink: HopSink = {
      factory: { tracer: undefined as never, captureContent: false },
      admit: () => true,
      queue: () => {},
    };
    for (const flags of [0, 1]) {
      const ids = newSpanIds(new TraceIds(TRACE), flags);
      const hop = new Hop(sink, MESSAGE, ids, PARENT, true, undefined);
      expect(hop.traceparent).toBe(formatTraceparent(TRACE, ids.spanId, flags));
      expect(parseTraceparent(hop.traceparent)).toBe(ids);
      expect(parseTraceparent(` ${hop.traceparent}`.slice(1))).toMatchObject({
        traceId: TRACE,
        spanId: ids.spanId,
        flags,
      });
    }
  });

  it('reads the clock for a sampled hop only (an unsampled one is never written)', () => {
    const sink: HopSink = {
      factory: { tracer: undefined as never, captureContent: false },
      admit: () => true,
      queue: () => {},
    };
    const clock = vi.spyOn(performance, 'now');
    new Hop(sink, MESSAGE, newSpanIds(new TraceIds(TRACE), 0), PARENT, true, undefined).end('ok');
    expect(clock).not.toHaveBeenCalled();
    new Hop(sink, MESSAGE, newSpanIds(new TraceIds(TRACE), 1), PARENT, true, undefined).end('ok');
    expect(clock).toHaveBeenCalledTimes(2);
  });

  it('writes nanosecond times past 2^53 exactly', () => {
    const times: [number, number] = [0.000001, 86_400_000.999999];
    const bytes = ours('ok', times, undefined, false);
    const [span] = decodeTraceRequest(bytes).resourceSpans[0]!.scopeSpans[0]!.spans;
    const [s, n] = millisToHrTime(performance.timeOrigin + times[1]);
    expect(BigInt(span!.endTimeUnixNano)).toBe(BigInt(s) * 1_000_000_000n + BigInt(n));
    expect(bytes.toString('hex')).toBe(sdk('ok', times, undefined).toString('hex'));
  });

  it('is the SDK serializer’s bytes for every hop of a trace, each written from the one before when only its ids, times, hop and message id differ', () => {
    // One trace: a hop of the same shape as the last one of its trace is copied from it with those
    // fields written in (hop-template.ts); any other is written field by field. Each hop's bytes are
    // compared whole, so a field left over from the hop before fails.
    const trace = new TraceIds(TRACE);
    const other = { ...PARENT, spanId: '0123456789abcdef' };
    const hops: Array<{
      message?: Partial<HopMessage>;
      outcome?: HopOutcome;
      parent?: SpanContext;
      ownParent?: boolean;
      payload?: string;
    }> = [
      {},
      { message: { id: '0195f1c2-aaaa-7bbb-8ccc-123456789abf', hop: 301 } }, // the same shape
      { message: { id: '0195f1c2-aaaa-7bbb-8ccc-12345678ü9ab', hop: 302 } }, // same length, two-byte char
      { message: { id: '0195f1c2-aaaa-7bbb-8ccc-123456789ab0', hop: 303 } },
      { message: { id: 'short', hop: 304 } }, // another id length
      { message: { id: 'short', hop: 5 } }, // the hop's varint one byte shorter
      { message: { id: 'short', hop: 127 } },
      { message: { id: 'short', hop: 128 } },
      { message: { id: 'short', hop: 2 ** 40 } },
      { message: { id: 'trohs', hop: 2 ** 40 + 1 } },
      { outcome: 'timeout' },
      { outcome: 'ok' },
      { parent: other }, // another parent, from its hex
      { parent: { ...other, isRemote: false } }, // the same, from this process
      { parent: other, ownParent: true }, // the same, from its bytes
      { parent: { ...PARENT, spanId: 'fedcba9876543210' }, ownParent: true },
      { parent: { ...other, isRemote: false } },
      { parent: undefined }, // a root
      { parent: undefined, message: { id: 'x'.repeat(120) } }, // lengths before the id of two bytes
      { parent: undefined, message: { id: 'y'.repeat(120) } },
      { parent: undefined, message: { id: 'z'.repeat(100) } },
      { parent: undefined, message: { id: 'w'.repeat(100) } },
      { message: { thread: 'another thread' } },
      { message: { thread: 'another thread', to: 'greeter' } }, // each part of the route alone
      { message: { thread: 'another thread', kind: 'response' } },
      { message: { thread: 'another thread', kind: 'response', tag: 'shout' } },
      { message: { thread: 'another thread', kind: 'response', tag: 'shout', from: 'shouter' } },
      { message: { to: 'greeter', from: 'shouter', tag: 'shout', kind: 'response' } },
      { message: { to: 'greeter', from: 'shouter', tag: 'shout', kind: 'response', hop: 9 } },
      { payload: '<note>captured</note>' }, // with content: never from a template
      { message: { hop: 10 } },
      // Ids this process made (nextId): written from their counter, the first field by field.
      ...Array.from({ length: 40 }, (_, k) => {
        const id = nextId();
        return { message: { id, idCount: lastIdCount(), hop: 400 + k } };
      }),
      { message: { id: nextId(), hop: 440 } }, // the same shape, no counter: the string is read
      // A template whose id was not made here, then ids that were: each written whole.
      { message: { id: nextId().replace(/./g, 'q'), kind: 'response', hop: 441 } },
      ...Array.from({ length: 3 }, (_, k) => {
        const id = nextId();
        return { message: { id, idCount: lastIdCount(), kind: 'response', hop: 442 + k } };
      }),
    ];
    hops.forEach((hop, i) => {
      const message = { ...MESSAGE, ...hop.message };
      const outcome = hop.outcome ?? 'ok';
      const parent = 'parent' in hop ? hop.parent : PARENT;
      const spanId = (i + 1).toString(16).padStart(16, '0');
      const times: [number, number] = [1000 + i * 10.123456, 1005 + i * 10.654321];
      const bytes = ours(
        outcome,
        times,
        parent,
        hop.payload !== undefined,
        hop.payload,
        message,
        hop.ownParent,
        SpanIds.of(trace, spanId, 1),
      );
      expect(bytes.toString('hex'), `hop ${i}`).toBe(
        sdk(outcome, times, parent, hop.payload, message, spanId).toString('hex'),
      );
    });
  });
});
