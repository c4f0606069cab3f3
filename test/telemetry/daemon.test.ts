/**
 * Tracing as an operator sees it: the real daemon (bin/organism.js run) with a `telemetry:`
 * section exports spans over OTLP/HTTP to a real receiver on 127.0.0.1 run by the test, which
 * decodes the JSON the exporter sends. One trace per thread with the hops as parent and children,
 * an agent's invoke_agent -> chat / execute_tool, the inject traceparent header followed, and no
 * content attributes unless capture_content is on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { threadTraceId } from '../../src/telemetry/traceparent.ts';
import { until } from '../../src/testing/index.ts';
import { type DaemonProcess, daemonFetch, startDaemonProcess } from '../helpers/daemon.ts';
import { DEFAULT_LISTENERS, organismFile, telemetryYaml } from './support/organism.ts';
import { byName, type OtlpReceiver, type ReceivedSpan, startReceiver } from './support/otlp-receiver.ts';

let receiver: OtlpReceiver;
let daemon: DaemonProcess;

beforeAll(async () => {
  receiver = await startReceiver();
  const file = await organismFile(DEFAULT_LISTENERS + telemetryYaml({ endpoint: receiver.url }));
  daemon = await startDaemonProcess(['--config', file]);
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await receiver?.close();
});

async function inject(to: string, payload: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await daemonFetch(`${daemon.url}/api/v1/inject`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ to, payload }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { thread: string }).thread;
}

/** The spans of `thread`'s hops and everything under them, once `count` of them have arrived. */
async function traceOf(thread: string, count: number): Promise<ReceivedSpan[]> {
  return until(
    () => {
      const hops = receiver.spans.filter((s) => s.attributes['organism.thread'] === thread);
      if (hops.length === 0) return undefined;
      const trace = receiver.spans.filter((s) => s.traceId === hops[0]!.traceId);
      return trace.length >= count ? trace : undefined;
    },
    { what: `${count} spans of thread ${thread}`, timeoutMs: 15_000 },
  );
}

describe('tracing the default organism', { timeout: 30_000 }, () => {
  it('exports OTLP/HTTP protobuf with the service name', async () => {
    const thread = await inject('greeter', '<greeting><name>Ada</name></greeting>');
    const spans = await traceOf(thread, 3);
    expect(receiver.contentType).toBe('application/x-protobuf');
    expect(spans[0]!.resource['service.name']).toBe('tracing-test');
    expect(typeof spans[0]!.resource['service.instance.id']).toBe('string');
  });

  it('one trace per thread: greeter -> shouter -> printer, each hop the child of the one that sent it', async () => {
    const thread = await inject('greeter', '<greeting><name>Grace</name></greeting>');
    const spans = await traceOf(thread, 3);
    expect(spans.map((s) => s.name).sort()).toEqual([
      'deliver greeter',
      'deliver printer',
      'deliver shouter',
    ]);
    const greeter = byName(spans, 'deliver greeter');
    const shouter = byName(spans, 'deliver shouter');
    const printer = byName(spans, 'deliver printer');
    // No traceparent at inject: the thread's own trace, its id derived from the thread id.
    expect(greeter.traceId).toBe(threadTraceId(thread));
    expect(greeter.parentSpanId).toBe('');
    expect(shouter.parentSpanId).toBe(greeter.spanId);
    expect(printer.parentSpanId).toBe(shouter.spanId);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(shouter.attributes).toMatchObject({
      'organism.thread': thread,
      'organism.from': 'greeter',
      'organism.to': 'shouter',
      'organism.tag': 'shout',
      'organism.kind': 'message',
      'organism.outcome': 'ok',
    });
    expect(shouter.kind).toBe(5); // CONSUMER
    // Another thread is another trace.
    const other = await inject('greeter', '<greeting><name>Alan</name></greeting>');
    const otherSpans = await traceOf(other, 3);
    expect(otherSpans[0]!.traceId).not.toBe(greeter.traceId);
  });

  it("joins the caller's trace given a traceparent header at inject", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const thread = await inject('greeter', '<greeting><name>Edsger</name></greeting>', {
      traceparent: `00-${traceId}-${callerSpan}-01`,
    });
    const spans = await traceOf(thread, 3);
    const greeter = byName(spans, 'deliver greeter');
    expect(greeter.traceId).toBe(traceId);
    expect(greeter.parentSpanId).toBe(callerSpan);
    expect(byName(spans, 'deliver printer').traceId).toBe(traceId);
  });

  it('ignores a traceparent that does not parse (the thread gets a trace of its own), as W3C says', async () => {
    const thread = await inject('greeter', '<greeting><name>Barbara</name></greeting>', {
      traceparent: '00-not-a-trace-01',
    });
    const spans = await traceOf(thread, 3);
    expect(byName(spans, 'deliver greeter').traceId).toBe(threadTraceId(thread));
    expect(byName(spans, 'deliver greeter').parentSpanId).toBe('');
  });

  it("an agent's task: deliver -> invoke_agent -> chat and execute_tool, with GenAI attributes", async () => {
    const thread = await inject('assistant', '<assistant><task>What is (17 + 25) * 3?</task></assistant>');
    // deliver assistant, invoke_agent, 3 chats, execute_tool, deliver printer (the agent's message)
    const spans = await traceOf(thread, 7);
    const hop = byName(spans, 'deliver assistant');
    const agent = byName(spans, 'invoke_agent assistant');
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    const tool = byName(spans, 'execute_tool calculate');
    expect(agent.parentSpanId).toBe(hop.spanId);
    expect(chats).toHaveLength(3);
    for (const chat of chats) {
      expect(chat.parentSpanId).toBe(agent.spanId);
      expect(chat.name).toBe('chat assistant-demo');
      expect(chat.kind).toBe(3); // CLIENT
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'scripted',
        'gen_ai.request.model': 'assistant-demo',
      });
      expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    }
    expect(tool.parentSpanId).toBe(agent.spanId);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'calculate',
      'organism.tool.outcome': 'ok',
    });
    expect(String(tool.attributes['gen_ai.tool.call.id'])).toContain('turn-1');
    const input = chats.reduce((n, c) => n + Number(c.attributes['gen_ai.usage.input_tokens']), 0);
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'assistant',
      'gen_ai.conversation.id': thread,
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'assistant-demo',
      'gen_ai.usage.input_tokens': input,
      'organism.agent.status': 'done',
    });
    expect(agent.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    // The printer's hop is the child of the agent's hop, in the same trace.
    const printer = byName(spans, 'deliver printer');
    expect(printer.parentSpanId).toBe(hop.spanId);
    expect(printer.traceId).toBe(hop.traceId);
  });

  it("a refused tool call: the guard's verdict and rule, and the dispatcher's code, on execute_tool", async () => {
    const thread = await inject(
      'toolbox',
      '<use-tool><tool>fetch_url</tool><args>{"url": "http://127.0.0.1:9/secret"}</args></use-tool>',
    );
    const spans = await traceOf(thread, 2);
    const hop = byName(spans, 'deliver toolbox');
    const tool = byName(spans, 'execute_tool fetch_url');
    expect(tool.parentSpanId).toBe(hop.spanId);
    expect(tool.attributes).toMatchObject({
      'organism.tool.outcome': 'refused',
      'organism.guard.verdict': 'deny',
      'organism.tool.code': 'GuardDenied',
      'error.type': 'GuardDenied',
    });
    expect(String(tool.attributes['organism.guard.rule_id'])).toMatch(/^web\./);
    expect(tool.status.code).toBe(2); // ERROR
    // Not granted: refused before any guard, so no verdict.
    const other = await inject('toolbox', '<use-tool><tool>run_command</tool><args>{}</args></use-tool>');
    const refused = byName(await traceOf(other, 2), 'execute_tool run_command');
    expect(refused.attributes['organism.tool.code']).toBe('PermissionDenied');
    expect(refused.attributes['organism.guard.verdict']).toBeUndefined();
  });

  it('records no content without capture_content: no payload, prompt, output, arguments or result', async () => {
    const thread = await inject('assistant', '<assistant><task>What is 6 * 7?</task></assistant>');
    const spans = await traceOf(thread, 7);
    for (const span of spans) {
      for (const key of Object.keys(span.attributes)) {
        expect(key).not.toMatch(/payload|messages|instructions|arguments|result/);
      }
    }
    // Not even in what went over the wire.
    const wire = receiver.bodies.join('\n');
    expect(wire).not.toContain('6 * 7');
    expect(wire).not.toContain('Grace');
  });
});
