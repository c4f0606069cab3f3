/** The traceparent values and the envelope's trace-context extension element. */
import { describe, expect, it } from 'vitest';
import {
  formatTraceparent,
  ownTraceparent,
  parseTraceparent,
  threadTraceId,
} from '../../src/telemetry/traceparent.ts';
import { buildEnvelope, parseEnvelope, TRACE_CONTEXT_NS } from '../../src/xml/envelope.ts';

const LIMITS = {
  maxBytes: 65_536,
  maxDepth: 32,
  maxAttributes: 32,
  maxTextLength: 65_536,
  maxElements: 10_000,
};
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('traceparent', () => {
  it('reads the W3C format, and refuses what the spec says to ignore', () => {
    expect(parseTraceparent(TP)).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      flags: 1,
    });
    expect(parseTraceparent(TP.toUpperCase())?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    for (const bad of [
      undefined,
      '',
      'garbage',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // zero trace id
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // zero span id
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // version ff
      `${TP}-extra`, // version 00 has exactly four fields
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', // short trace id
    ]) {
      expect(parseTraceparent(bad), String(bad)).toBeUndefined();
    }
    // A later version is read by its first four fields.
    expect(parseTraceparent(`01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more`)?.flags).toBe(1);
    expect(formatTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 3)).toBe(TP);
  });

  it("reads back a hop span's own traceparent as a parse of its text reads it", () => {
    const own = ownTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 3);
    expect(own).toBe(TP);
    // The value kept (one slot) and a copy of its text (parsed from the characters): the same parts.
    const copy = ` ${own}`.slice(1);
    expect(parseTraceparent(own)).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      flags: 1,
    });
    expect(parseTraceparent(own)).toEqual(parseTraceparent(copy));
    // Unsampled: flags 0, as the text says.
    const unsampled = ownTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 0);
    expect(parseTraceparent(unsampled)?.flags).toBe(0);
    // All-zero ids are never kept: the text is refused as any other such text.
    const zero = ownTraceparent('00000000000000000000000000000000', '00f067aa0ba902b7', 1);
    expect(parseTraceparent(zero)).toBeUndefined();
    const zeroSpan = ownTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '0000000000000000', 1);
    expect(parseTraceparent(zeroSpan)).toBeUndefined();
    // Another value after the one kept is parsed from its text.
    ownTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 1);
    expect(parseTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00')).toEqual({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      flags: 0,
    });
  });

  it('derives one trace id per thread, the same in every daemon', () => {
    expect(threadTraceId('t-1')).toBe(threadTraceId('t-1'));
    expect(threadTraceId('t-1')).not.toBe(threadTraceId('t-2'));
    expect(threadTraceId('t-1')).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('the envelope carries it as an extension element of <meta>', () => {
  it('round-trips, and an envelope without it has none', () => {
    const xml = buildEnvelope({ from: 'a', to: 'b', thread: 't', traceparent: TP }, '<ping><n>1</n></ping>');
    expect(xml).toContain(`<traceparent xmlns="${TRACE_CONTEXT_NS}">${TP}</traceparent></meta>`);
    const parsed = parseEnvelope(xml, LIMITS);
    expect(parsed).toMatchObject({ from: 'a', to: 'b', thread: 't', traceparent: TP, tag: 'ping' });
    const plain = parseEnvelope(buildEnvelope({ from: 'a', thread: 't' }, '<ping/>'), LIMITS);
    expect(plain.traceparent).toBeUndefined();
    expect(buildEnvelope({ from: 'a', thread: 't' }, '<ping/>')).not.toContain('traceparent');
  });

  it('is ignored in another namespace, and other extension elements are still skipped', () => {
    const xml =
      '<message xmlns="https://xml-pipeline.org/ns/envelope/v1"><meta><from>a</from><thread>t</thread>' +
      `<traceparent xmlns="urn:someone-else">${TP}</traceparent><x:note xmlns:x="urn:x">hi</x:note></meta>` +
      '<ping xmlns=""/></message>';
    const parsed = parseEnvelope(xml, LIMITS);
    expect(parsed.traceparent).toBeUndefined();
    expect(parsed.from).toBe('a');
  });
});
