/**
 * Tracing's cost on the hot path: pipeline passes per second (the pipeline bench's self-looping
 * bus) with no tracing, and with tracing on at sample ratio 1.0 exporting every span over
 * OTLP/HTTP to a receiver on 127.0.0.1 (a separate process, as a collector is), in the same run.
 * Targets: on >= 0.7x off; off unchanged (compare with the pipeline line's pipeline_passes_per_s).
 * A span that finds the export queue full is dropped and counted, never waited for: the counts
 * say how many were exported and how many dropped. The self-looping bus keeps the event loop busy
 * for a whole run, so the exporter's requests get their answers mostly between runs: the figure is
 * what tracing costs the hot path (spans made, queued or dropped), not how fast spans are exported.
 */
import { spawn } from 'node:child_process';
import type { BusOptions } from '../src/bus/bus.ts';
import type { TelemetrySection } from '../src/config/types.ts';
import { createTelemetry, type Telemetry } from '../src/telemetry/otel.ts';
import { round } from './support.ts';
import { selfLoopBus } from './support-bus.ts';

const PASSES_PER_THREAD = 10_000;
const THREADS = 8;
/** Off and on alternate this many times; the best of each counts (the machine may be shared). */
const ROUNDS = 5;

/** A receiver that reads each request and answers 200, in its own process. */
const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{}'); });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

async function startReceiver(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the receiver exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

/** organism.yaml's telemetry: with the schema's defaults, sample ratio 1.0, content off. */
function section(endpoint: string): TelemetrySection {
  return {
    otlp: { endpoint, timeout_ms: 10_000 },
    service_name: 'bench',
    sample_ratio: 1,
    capture_content: false,
    max_queue_size: 2048,
    max_export_batch_size: 512,
    export_delay_ms: 1000,
  };
}

async function passesPerSecond(extra: Partial<BusOptions>): Promise<number> {
  const loop = await selfLoopBus(PASSES_PER_THREAD, false, 100, extra);
  const start = process.hrtime.bigint();
  const total = await loop.run(THREADS);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await loop.stop();
  return total / seconds;
}

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const receiver = await startReceiver();
  let telemetry: Telemetry | undefined;
  try {
    telemetry = createTelemetry(section(receiver.url), { env: {}, instanceId: 'bench' });
    const on = { tracing: telemetry.tracing };
    // Warm both paths, then alternate, so a busy moment of the machine costs both alike.
    await passesPerSecond({});
    await passesPerSecond(on);
    let off = 0;
    let onBest = 0;
    for (let i = 0; i < ROUNDS; i++) {
      off = Math.max(off, await passesPerSecond({}));
      onBest = Math.max(onBest, await passesPerSecond(on));
    }
    await telemetry.flush();
    const counts = telemetry.counts();
    yield {
      name: 'telemetry',
      pipeline_passes_per_s_off: round(off, 0),
      pipeline_passes_per_s_on: round(onBest, 0),
      ratio_on_off: round(onBest / off, 2),
      target_ratio: 0.7,
      sample_ratio: 1,
      spans_exported: counts.exported,
      spans_dropped_queue_full: counts.queueFull,
      spans_dropped_export_failed: counts.exportFailed,
    };
  } finally {
    await telemetry?.shutdown();
    receiver.stop();
  }
}
