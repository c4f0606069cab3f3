/**
 * A thread spread over two daemons on one Redis is one trace: the traceparent travels in each
 * message's envelope. Two daemons (startDaemon, each with its own data dir and tracer, as on two
 * machines) share the real redis-server at 127.0.0.1:6379 and export to one OTLP/HTTP receiver;
 * the first stops reading `shouter` and the second `greeter` and `printer`, so the default
 * organism's greeter -> shouter -> printer crosses from one to the other and back.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../src/daemon.ts';
import { threadTraceId } from '../../src/telemetry/traceparent.ts';
import { until } from '../../src/testing/index.ts';
import { dropGroup, SHARED_REDIS } from '../e2e/redis-support/harness.ts';
import { LISTENERS, telemetryYaml } from './support/organism.ts';
import { byName, type OtlpReceiver, startReceiver } from './support/otlp-receiver.ts';

const group = `trace-${randomUUID().slice(0, 8)}`;
let receiver: OtlpReceiver;
const daemons: Daemon[] = [];

async function daemon(endpoint: string): Promise<Daemon> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-tracing-redis-'));
  const file = join(dir, 'organism.yaml');
  await writeFile(
    file,
    `organism:
  name: tracing-redis
server:
  host: 127.0.0.1
bus:
  transport: redis
  url: ${SHARED_REDIS}
  group: ${group}
history:
  max_bytes: 0
listeners:
  - name: greeter
    handler: ${LISTENERS}greeter.ts
    peers: [shouter]
  - name: shouter
    handler: ${LISTENERS}shouter.ts
    peers: [printer]
  - name: printer
    handler: ${LISTENERS}printer.ts
${telemetryYaml({ endpoint })}`,
  );
  const started = await startDaemon({
    configPath: file,
    port: 0,
    reloadOnSighup: false,
    logger: pino({ level: 'silent' }),
  });
  daemons.push(started);
  return started;
}

/** This daemon takes no more messages for `listener`: the other daemon gets all of them. */
async function stopReading(d: Daemon, listener: string): Promise<void> {
  expect(await d.bus.stopReading(listener)).toBe(true);
}

beforeAll(async () => {
  receiver = await startReceiver();
}, 30_000);

afterAll(async () => {
  for (const d of daemons.splice(0)) await d.close(500).catch(() => {});
  await receiver?.close();
  await dropGroup(SHARED_REDIS, group);
});

describe('a thread across two daemons on Redis', { timeout: 60_000 }, () => {
  it('is one trace, each hop the child of the hop that sent it on the other daemon', async () => {
    const a = await daemon(receiver.url);
    const b = await daemon(receiver.url);
    await stopReading(a, 'shouter');
    await stopReading(b, 'greeter');
    await stopReading(b, 'printer');
    const { thread } = await a.bus.inject({
      to: 'greeter',
      payload: '<greeting><name>Ada</name></greeting>',
    });
    const spans = await until(
      () => {
        const found = receiver.spans.filter((s) => s.attributes['organism.thread'] === thread);
        return found.length >= 3 ? found : undefined;
      },
      { what: 'the three hops of the thread', timeoutMs: 20_000 },
    );
    const greeter = byName(spans, 'deliver greeter');
    const shouter = byName(spans, 'deliver shouter');
    const printer = byName(spans, 'deliver printer');
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([threadTraceId(thread)]));
    expect(shouter.parentSpanId).toBe(greeter.spanId);
    expect(printer.parentSpanId).toBe(shouter.spanId);
    // Exported by two tracers: the first daemon's, the second's, the first's again.
    const first = greeter.resource['service.instance.id'];
    const second = shouter.resource['service.instance.id'];
    expect(first).not.toBe(second);
    expect(printer.resource['service.instance.id']).toBe(first);
  });
});
