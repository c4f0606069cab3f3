/**
 * capture_content: payloads, prompts, model output, tool arguments and results in spans, redacted
 * as the audit redacts them (a secret the daemon knows never leaves in a span). And a collector
 * that is gone: the bus does all its work, and the spans it could not export are counted in
 * /metrics. Real daemons, a real OTLP/HTTP receiver on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../src/testing/index.ts';
import { type DaemonProcess, daemonFetch, startDaemonProcess } from '../helpers/daemon.ts';
import { DEFAULT_LISTENERS, organismFile, telemetryYaml } from './support/organism.ts';
import { byName, type OtlpReceiver, startReceiver } from './support/otlp-receiver.ts';

const SECRET = 'Zt7pQ2wLx9Kv4Rm8Bn3c';
const SMTP_WITH_SECRET = `smtp:
  host: 127.0.0.1
  port: 1
  from: organism@example.com
  user: organism
  password_env: TRACE_TEST_SMTP_PASSWORD
`;

let receiver: OtlpReceiver | undefined;
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  await receiver?.close();
  daemon = undefined;
  receiver = undefined;
});

async function inject(url: string, to: string, payload: string): Promise<string> {
  const res = await daemonFetch(`${url}/api/v1/inject`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ to, payload }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { thread: string }).thread;
}

function metric(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').pop());
  return sum;
}

describe('capture_content', { timeout: 40_000 }, () => {
  it('records payloads, prompts, output, arguments and results, with known secrets redacted', async () => {
    receiver = await startReceiver();
    const file = await organismFile(
      DEFAULT_LISTENERS + SMTP_WITH_SECRET + telemetryYaml({ endpoint: receiver.url, captureContent: true }),
    );
    daemon = await startDaemonProcess(['--config', file], { TRACE_TEST_SMTP_PASSWORD: SECRET });
    const greeted = await inject(daemon.url, 'greeter', `<greeting><name>Ada ${SECRET}</name></greeting>`);
    const asked = await inject(
      daemon.url,
      'assistant',
      '<assistant><task>What is (17 + 25) * 3?</task></assistant>',
    );
    const r = receiver;
    const spans = await until(
      () => {
        const traces = new Set(
          r.spans
            .filter(
              (s) => s.attributes['organism.thread'] === greeted || s.attributes['organism.thread'] === asked,
            )
            .map((s) => s.traceId),
        );
        const all = r.spans.filter((s) => traces.has(s.traceId));
        return all.length >= 10 ? all : undefined;
      },
      { what: 'the spans of both threads', timeoutMs: 20_000 },
    );
    const greeter = spans.find((s) => s.name === 'deliver greeter')!;
    expect(greeter.attributes['organism.payload']).toContain('<name>Ada [REDACTED]</name>');
    const shouter = spans.find((s) => s.name === 'deliver shouter')!;
    expect(shouter.attributes['organism.payload']).toContain('Hello, Ada [REDACTED]!');

    const agentSpans = spans.filter((s) => s.attributes['gen_ai.conversation.id'] === asked);
    const chat = agentSpans.find((s) => s.name.startsWith('chat '))!;
    expect(chat.attributes['gen_ai.input.messages']).toContain('What is (17 + 25) * 3?');
    expect(chat.attributes['gen_ai.system_instructions']).toContain('concise assistant');
    expect(chat.attributes['gen_ai.output.messages']).toContain('calculate');
    const tool = byName(agentSpans, 'execute_tool calculate');
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({
      expression: '(17 + 25) * 3',
    });
    expect(String(tool.attributes['gen_ai.tool.call.result'])).toContain('126');
    // The secret the daemon knows (the SMTP password) left in no span.
    const wire = r.bodies.join('\n');
    expect(wire).toContain('[REDACTED]');
    expect(wire).not.toContain(SECRET);
  });
});

describe('a collector that is down', { timeout: 60_000 }, () => {
  it('slows nothing down: every thread is handled, and the spans not exported are counted in /metrics', async () => {
    // A port nothing listens on any more: every export is refused.
    const gone = await startReceiver();
    const port = gone.port;
    await gone.close();
    const file = await organismFile(
      DEFAULT_LISTENERS +
        telemetryYaml({ endpoint: `http://127.0.0.1:${port}`, maxQueueSize: 16, timeoutMs: 1000 }),
    );
    daemon = await startDaemonProcess(['--config', file]);
    const url = daemon.url;
    const threads: string[] = [];
    for (let i = 0; i < 40; i++)
      threads.push(await inject(url, 'greeter', `<greeting><name>n${i}</name></greeting>`));
    // Every thread went all the way to the printer.
    for (const thread of threads) {
      await until(
        async () => {
          const view = (await (await daemonFetch(`${url}/api/v1/threads/${thread}`)).json()) as {
            status: string;
            messages: Array<{ to: string }>;
          };
          return view.status === 'idle' && view.messages.some((m) => m.to === 'printer');
        },
        { what: `thread ${thread} to reach the printer`, timeoutMs: 20_000 },
      );
    }
    // 120 hop spans: at most max_queue_size of them still queued, the rest dropped and counted.
    const counted = await until(
      async () => {
        const text = await (await daemonFetch(`${url}/metrics`)).text();
        const full = metric(text, 'organism_trace_spans_dropped_total{reason="queue_full"}');
        const failed = metric(text, 'organism_trace_spans_dropped_total{reason="export_failed"}');
        return full + failed >= 120 - 16 ? { full, failed, text } : undefined;
      },
      { what: 'the dropped spans counted', timeoutMs: 30_000 },
    );
    // How they split between a full queue and refused exports depends on how fast the refusals
    // come back; every span is accounted for either way, and none was exported.
    expect(counted.full + counted.failed).toBeGreaterThanOrEqual(120 - 16);
    expect(metric(counted.text, 'organism_trace_spans_exported_total')).toBe(0);
    expect(daemon.stdout()).toContain('trace export failed');
  });
});
