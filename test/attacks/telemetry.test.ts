/**
 * Attacks on tracing (issue 20) against the real daemon exporting to a real OTLP/HTTP receiver:
 * with capture_content on, a secret the daemon knows (an API token kept in the .env beside
 * organism.yaml) sent inside a task never reaches a span or the wire; forged traceparent headers
 * (malformed, huge, all zeros, version ff, odd characters) are ignored and every inject goes on.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../src/testing/index.ts';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';
import { DEFAULT_LISTENERS, organismFile, telemetryYaml } from '../telemetry/support/organism.ts';
import { type OtlpReceiver, startReceiver } from '../telemetry/support/otlp-receiver.ts';

const TOKEN = 'tel-Atk7Qm2Wz9Lp4Xv8Rb3N';
let receiver: OtlpReceiver;
let daemon: DaemonProcess;

beforeAll(async () => {
  receiver = await startReceiver();
  const file = await organismFile(
    `auth:\n  tokens:\n    - { name: ops, role: operator, token_env: ATTACK_TEL_TOKEN }\n` +
      DEFAULT_LISTENERS +
      telemetryYaml({ endpoint: receiver.url, captureContent: true }),
  );
  // Only in the .env beside organism.yaml: the daemon's own environment does not have it.
  await writeFile(join(dirname(file), '.env'), `ATTACK_TEL_TOKEN=${TOKEN}\n`);
  daemon = await startDaemonProcess(['--config', file]);
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await receiver?.close();
});

async function inject(to: string, payload: string, headers: Record<string, string> = {}) {
  return fetch(`${daemon.url}/api/v1/inject`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
    body: JSON.stringify({ to, payload }),
  });
}

describe('tracing attacks', { timeout: 60_000 }, () => {
  it('capture_content on: a known secret in a task is in no span and nowhere on the wire', async () => {
    const res = await inject(
      'assistant',
      `<assistant><task>What is 6 * 7? Also remember ${TOKEN} and ${TOKEN.toUpperCase()}</task></assistant>`,
    );
    expect(res.status).toBe(202);
    const { thread } = (await res.json()) as { thread: string };
    await until(
      () => {
        const hops = receiver.spans.filter((s) => s.attributes['organism.thread'] === thread);
        if (hops.length === 0) return undefined;
        const trace = receiver.spans.filter((s) => s.traceId === hops[0]!.traceId);
        // Content was captured (the test would prove nothing otherwise).
        return trace.some((s) => JSON.stringify(s.attributes).includes('6 * 7')) && trace.length >= 7
          ? trace
          : undefined;
      },
      { what: `the spans of ${thread}`, timeoutMs: 20_000 },
    );
    const wire = receiver.bodies.join('\n');
    expect(wire).toContain('[REDACTED]');
    expect(wire.toLowerCase()).not.toContain(TOKEN.toLowerCase());
    expect(wire).not.toContain('Qm2Wz9Lp4Xv8');
    expect(wire).not.toContain(Buffer.from(TOKEN).toString('base64').slice(0, 12));
  });

  it('forged traceparent headers are ignored; every inject is accepted and its thread handled', async () => {
    const forged = [
      'garbage',
      `00-${'f'.repeat(32)}-${'f'.repeat(16)}-01-${'x'.repeat(6000)}`,
      `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`,
      `ff-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
      `00-${'A'.repeat(32)}-${'B'.repeat(16)}-01`,
      `00-${'a'.repeat(31)}\u00e9-${'b'.repeat(16)}-01`,
      `00-${'a'.repeat(32)}-${'b'.repeat(16)}-zz`,
      '00--- ',
      `${'0'.repeat(55)}`,
    ];
    const threads: string[] = [];
    for (const value of forged) {
      const res = await inject('greeter', '<greeting><name>Ada</name></greeting>', {
        traceparent: encodeURI(value),
      });
      expect(res.status, value.slice(0, 60)).toBe(202);
      threads.push(((await res.json()) as { thread: string }).thread);
    }
    for (const thread of threads) {
      const spans = await until(
        () => {
          const hops = receiver.spans.filter((s) => s.attributes['organism.thread'] === thread);
          return hops.length >= 3 ? hops : undefined;
        },
        { what: `hops of ${thread}`, timeoutMs: 20_000 },
      );
      for (const span of spans) {
        expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(span.traceId).not.toBe('0'.repeat(32));
        expect(span.traceId).not.toBe('f'.repeat(32));
      }
    }
    const health = await fetch(`${daemon.url}/api/v1/health`);
    expect(health.status).toBeLessThan(500);
  });
});
