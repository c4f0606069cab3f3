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
import { Hop, type HopSink } from '../../src/telemetry/hop.ts';
import { contentAttribute } from '../../src/telemetry/spans.ts';
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

/** The request our encoder writes for one hop, started at `start` and ended at `end` (performance.now). */
function ours(
  outcome: HopOutcome,
  times: [number, number],
  parent: SpanContext | undefined,
  captureContent: boolean,
  payload?: string,
  message = MESSAGE,
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
  new Hop(sink, message, { traceId: TRACE, spanId: SPAN, flags: 1, parent }, payload).end(outcome);
  clock.mockRestore();
  const w = new Wire(64);
  w.byte(0x12);
  const at = w.open();
  queued!.writeTo(w);
  w.close(at);
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
  const context = { traceId: TRACE, spanId: SPAN, traceFlags: 1 };
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
      for (const outcome of ['ok', 'error', 'timeout', 'invalid', 'busy'] as const) {
        expect(ours(outcome, times, parent, false).toString('hex')).toBe(
          sdk(outcome, times, parent).toString('hex'),
        );
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

  it('writes nanosecond times past 2^53 exactly', () => {
    const times: [number, number] = [0.000001, 86_400_000.999999];
    const bytes = ours('ok', times, undefined, false);
    const [span] = decodeTraceRequest(bytes).resourceSpans[0]!.scopeSpans[0]!.spans;
    const [s, n] = millisToHrTime(performance.timeOrigin + times[1]);
    expect(BigInt(span!.endTimeUnixNano)).toBe(BigInt(s) * 1_000_000_000n + BigInt(n));
    expect(bytes.toString('hex')).toBe(sdk('ok', times, undefined).toString('hex'));
  });
});
