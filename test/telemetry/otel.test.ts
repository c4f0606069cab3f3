/**
 * The tracing on its own (createTelemetry, no bus): where spans go and what bad settings say,
 * sampling by the thread's first hop and by a parent's flag, and shutdown sending what is queued.
 * Spans go to a real OTLP/HTTP receiver on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TelemetrySection } from '../../src/config/types.ts';
import { otlpHeaders, tracesUrl } from '../../src/telemetry/options.ts';
import { createTelemetry, type Telemetry } from '../../src/telemetry/otel.ts';
import { threadTraceId } from '../../src/telemetry/traceparent.ts';
import { type OtlpReceiver, startReceiver } from './support/otlp-receiver.ts';

let receiver: OtlpReceiver | undefined;
let telemetry: Telemetry | undefined;
afterEach(async () => {
  await telemetry?.shutdown();
  await receiver?.close();
  telemetry = undefined;
  receiver = undefined;
});

function section(endpoint: string, sampleRatio = 1): TelemetrySection {
  return {
    otlp: { endpoint, timeout_ms: 2000 },
    service_name: 'otel-test',
    sample_ratio: sampleRatio,
    capture_content: false,
    max_queue_size: 100,
    max_export_batch_size: 10,
    export_delay_ms: 10_000,
  };
}

const message = (thread: string, n: number) => ({
  id: `m${n}`,
  thread,
  from: 'a',
  to: 'b',
  tag: 'ping',
  kind: 'message',
  hop: n,
});

describe('settings', () => {
  it('adds /v1/traces to the endpoint, and refuses what is not an http(s) URL or carries credentials', () => {
    expect(tracesUrl('http://127.0.0.1:4318')).toBe('http://127.0.0.1:4318/v1/traces');
    expect(tracesUrl('http://127.0.0.1:4318/')).toBe('http://127.0.0.1:4318/v1/traces');
    expect(tracesUrl('https://otel.example.com/v1/traces')).toBe('https://otel.example.com/v1/traces');
    expect(() => tracesUrl('127.0.0.1:4318')).toThrow(/telemetry.otlp.endpoint/);
    expect(() => tracesUrl('ftp://host/')).toThrow(/http:\/\/ or https:\/\//);
    expect(() => tracesUrl('http://user:pw@host:4318')).toThrow(/headers_env/);
  });

  it('reads headers as name=value pairs, and names the variable (not its value) when one does not read', () => {
    expect(otlpHeaders('H', { H: 'authorization=Bearer%20abc, x-scope-orgid=42' })).toEqual({
      authorization: 'Bearer abc',
      'x-scope-orgid': '42',
    });
    expect(otlpHeaders(undefined, {})).toEqual({});
    expect(otlpHeaders('H', {})).toEqual({});
    let error: unknown;
    try {
      otlpHeaders('H', { H: 'authorization' });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'telemetry.headers' });
    expect(String(error)).toContain('H (telemetry.otlp.headers_env): entry 1 is not name=value');
    expect(() => otlpHeaders('H', { H: 'a=%E0%A4%A' })).toThrow(/the value of a is not URL-encoded/);
  });
});

describe('sampling and export', () => {
  it('shutdown exports what is queued; hops chain by the traceparent they carry', async () => {
    receiver = await startReceiver();
    telemetry = createTelemetry(section(receiver.url), { env: {}, instanceId: 'one' });
    const first = telemetry.tracing.hop(message('t1', 1), undefined);
    const second = telemetry.tracing.hop(message('t1', 2), first.traceparent);
    second.end('ok');
    first.end('error');
    expect(receiver.spans).toHaveLength(0); // batched, not sent yet
    await telemetry.shutdown();
    expect(receiver.spans).toHaveLength(2);
    const [a, b] = [
      receiver.spans.find((s) => s.attributes['organism.hop'] === 1)!,
      receiver.spans.find((s) => s.attributes['organism.hop'] === 2)!,
    ];
    expect(a.traceId).toBe(threadTraceId('t1'));
    expect(b.parentSpanId).toBe(a.spanId);
    expect(a.status).toMatchObject({ code: 2, message: 'error' });
    expect(telemetry.counts()).toEqual({ exported: 2, queueFull: 0, exportFailed: 0 });
  });

  it('many batches (their buffers reused once answered): every span arrives once, intact', async () => {
    receiver = await startReceiver();
    telemetry = createTelemetry(section(receiver.url), { env: {}, instanceId: 'many' });
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 25; i++)
        telemetry.tracing.hop(message(`t${round}`, round * 25 + i), undefined).end('ok');
      await telemetry.flush();
    }
    expect(receiver.requests).toBeGreaterThanOrEqual(10);
    const hops = receiver.spans
      .map((s) => s.attributes['organism.hop'])
      .sort((a, b) => Number(a) - Number(b));
    expect(hops).toEqual(Array.from({ length: 100 }, (_, i) => i));
    for (const s of receiver.spans) {
      const hop = Number(s.attributes['organism.hop']);
      expect(s.attributes['organism.thread']).toBe(`t${Math.floor(hop / 25)}`);
      expect(s.traceId).toBe(threadTraceId(`t${Math.floor(hop / 25)}`));
    }
    expect(telemetry.counts()).toEqual({ exported: 100, queueFull: 0, exportFailed: 0 });
  });

  it('sample_ratio 0 exports nothing, yet the context goes on (unsampled), in the same trace', async () => {
    receiver = await startReceiver();
    telemetry = createTelemetry(section(receiver.url, 0), { env: {}, instanceId: 'zero' });
    const first = telemetry.tracing.hop(message('t2', 1), undefined);
    expect(first.traceparent).toMatch(new RegExp(`^00-${threadTraceId('t2')}-[0-9a-f]{16}-00$`));
    const second = telemetry.tracing.hop(message('t2', 2), first.traceparent);
    expect(second.traceparent.slice(3, 35)).toBe(threadTraceId('t2'));
    first.end('ok');
    second.end('ok');
    // A caller's unsampled flag is followed even at ratio 1.
    const all = createTelemetry(section(receiver.url, 1), { env: {}, instanceId: 'all' });
    all.tracing.hop(message('t3', 1), '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00').end('ok');
    all.tracing.hop(message('t4', 1), '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01').end('ok');
    await all.shutdown();
    await telemetry.shutdown();
    expect(receiver.spans.map((s) => s.attributes['organism.thread'])).toEqual(['t4']);
  });

  it('counts what a full queue drops, and what a refused export loses', async () => {
    receiver = await startReceiver();
    const port = receiver.port;
    await receiver.close();
    receiver = undefined;
    telemetry = createTelemetry(
      { ...section(`http://127.0.0.1:${port}`), max_queue_size: 5 },
      { env: {}, instanceId: 'gone' },
    );
    // Batches of 5: the first goes to the exporter at once, the next 5 wait, 2 find the queue full.
    for (let i = 0; i < 12; i++) telemetry.tracing.hop(message('t5', i), undefined).end('ok');
    expect(telemetry.counts().queueFull).toBe(2);
    await telemetry.shutdown();
    expect(telemetry.counts()).toEqual({ exported: 0, queueFull: 2, exportFailed: 10 });
  });
});
