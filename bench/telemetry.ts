/**
 * Tracing's cost on the hot path: pipeline passes per second (the pipeline bench's self-looping
 * bus) with no tracing, and with tracing on at sample ratio 1.0 exporting every span over
 * OTLP/HTTP to a receiver on 127.0.0.1 (a separate process, as a collector is), in the same run.
 * Targets: on >= 0.7x off; off unchanged (compare with the pipeline line's pipeline_passes_per_s).
 * A span that finds the export queue full is dropped and counted, never waited for. The bus lets
 * the event loop turn every few hundred handler runs (src/bus/scheduler.ts), so the exporter sends
 * while the threads loop; the queue and batch below are sized so that it keeps up with this load:
 * `spans_dropped` says what was lost anyway (target 0), and the ratios are measured at that load.
 * Throughput on a shared machine swings with its neighbours (on this box a run's speed moves by a
 * half within seconds), so off and on are measured in short slices taken in turns, ROUNDS pairs,
 * each pair's order alternating, and the headline `ratio_on_off` is the median of the pairs' own
 * ratios: both sides of a pair see the same machine. An on slice's time includes exporting what
 * it made (a flush at its end), so no export spills into the next slice. `ratio_on_off_best` is the
 * best on over the best off, the headline before (each side's best may come from another moment).
 * The CPU time per pass (this process's, the exporter's encoding and sending included; not the
 * receiver's) is given too: `cpu_ratio_off_on` is the share of the throughput tracing leaves when
 * the CPU is the limit.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { BusOptions } from '../src/bus/bus.ts';
import type { TelemetrySection } from '../src/config/types.ts';
import { createTelemetry, type Telemetry } from '../src/telemetry/otel.ts';
import { median, round } from './support.ts';
import { selfLoopBus } from './support-bus.ts';

const PASSES_PER_THREAD = 5_000;
const THREADS = 8;
/**
 * Pairs of slices, off and on (and one at sample 0 for the trace context's CPU). A pair's own
 * ratio spreads 0.57-0.84 on this box (a slice is ~0.15 s of a machine whose speed moves within
 * seconds): the median of 20 read 0.68-0.75 for one build in nine runs; 40 halve its variance.
 */
const ROUNDS = 40;
const QUEUE = 16_384;
const BATCH = 2_048;

/** A receiver that reads each request and answers 200, in its own process. */
const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/x-protobuf' }); res.end(); });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

async function startReceiver(): Promise<{ url: string; pid: number; stop(): void }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the receiver exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => child.kill() };
}

/** A process's CPU milliseconds so far (Linux /proc; undefined elsewhere). */
function processCpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/** organism.yaml's telemetry: with the schema's defaults, content off; sample ratio 1.0 unless given. */
function section(endpoint: string, sampleRatio = 1): TelemetrySection {
  return {
    otlp: { endpoint, timeout_ms: 10_000 },
    service_name: 'bench',
    sample_ratio: sampleRatio,
    capture_content: false,
    // Sized for this load (the schema's defaults are 2048 and 512): about a tenth of a second of
    // spans can wait while one batch is on its way.
    max_queue_size: QUEUE,
    max_export_batch_size: BATCH,
    export_delay_ms: 200,
  };
}

/**
 * Passes per second and this process's CPU microseconds per pass, in one run; with `telemetry`,
 * until what the run made is exported too.
 */
async function passesPerSecond(
  extra: Partial<BusOptions>,
  telemetry?: Telemetry,
): Promise<{ perSecond: number; cpuUs: number }> {
  const loop = await selfLoopBus(PASSES_PER_THREAD, false, 100, extra);
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  const total = await loop.run(THREADS);
  await telemetry?.flush();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  await loop.stop();
  return { perSecond: total / seconds, cpuUs: (cpu.user + cpu.system) / total };
}

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const receiver = await startReceiver();
  let telemetry: Telemetry | undefined;
  let unsampled: Telemetry | undefined;
  try {
    telemetry = createTelemetry(section(receiver.url), { env: {}, instanceId: 'bench' });
    const on = { tracing: telemetry.tracing };
    // Sample ratio 0: every hop reads and writes its traceparent, no span is exported. The CPU
    // per pass it adds is the trace context's cost; what sample 1.0 adds on top is the export's.
    unsampled = createTelemetry(section(receiver.url, 0), { env: {}, instanceId: 'bench' });
    const context = { tracing: unsampled.tracing };
    const receiverCpu0 = processCpuMs(receiver.pid);
    // Warm both paths, then alternate, so a busy moment of the machine costs both alike.
    await passesPerSecond({});
    await passesPerSecond(on, telemetry);
    const offs: number[] = [];
    const ons: number[] = [];
    let cpuOff = Number.POSITIVE_INFINITY;
    let cpuOn = Number.POSITIVE_INFINITY;
    let cpuContext = Number.POSITIVE_INFINITY;
    // Each pair's own on/off: the headline is their median.
    const rounds: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const first = i % 2 === 0;
      const a = first ? await passesPerSecond({}) : undefined;
      const b = await passesPerSecond(on, telemetry);
      const off = a ?? (await passesPerSecond({}));
      const c = await passesPerSecond(context);
      rounds.push(b.perSecond / off.perSecond);
      offs.push(off.perSecond);
      ons.push(b.perSecond);
      cpuOff = Math.min(cpuOff, off.cpuUs);
      cpuOn = Math.min(cpuOn, b.cpuUs);
      cpuContext = Math.min(cpuContext, c.cpuUs);
    }
    await telemetry.flush();
    const counts = telemetry.counts();
    const receiverCpu1 = processCpuMs(receiver.pid);
    yield {
      name: 'telemetry',
      pipeline_passes_per_s_off: round(median(offs), 0),
      pipeline_passes_per_s_on: round(median(ons), 0),
      ratio_on_off: round(median(rounds), 2),
      ratio_on_off_rounds: rounds.map((r) => round(r, 2)),
      ratio_on_off_best: round(Math.max(...ons) / Math.max(...offs), 2),
      passes_per_slice: PASSES_PER_THREAD * THREADS,
      cpu_us_per_pass_off: round(cpuOff, 1),
      cpu_us_per_pass_on: round(cpuOn, 1),
      cpu_ratio_off_on: round(cpuOff / cpuOn, 2),
      // Where tracing's CPU per pass goes: the trace context (sample 0), then the export.
      cpu_us_per_pass_sample0: round(cpuContext, 1),
      cpu_us_trace_context: round(cpuContext - cpuOff, 1),
      cpu_us_export_per_span: round(cpuOn - cpuContext, 1),
      // The receiver's (a collector's) CPU per span it decoded nothing of: HTTP and the bytes.
      ...(receiverCpu0 !== undefined && receiverCpu1 !== undefined && counts.exported > 0
        ? { receiver_cpu_us_per_span: round(((receiverCpu1 - receiverCpu0) * 1000) / counts.exported, 1) }
        : {}),
      target_ratio: 0.7,
      sample_ratio: 1,
      spans_made: (ROUNDS + 1) * PASSES_PER_THREAD * THREADS,
      spans_exported: counts.exported,
      spans_dropped: counts.queueFull + counts.exportFailed,
      spans_dropped_queue_full: counts.queueFull,
      spans_dropped_export_failed: counts.exportFailed,
      max_queue_size: QUEUE,
      max_export_batch_size: BATCH,
    };
  } finally {
    await telemetry?.shutdown();
    await unsampled?.shutdown();
    receiver.stop();
  }
}
