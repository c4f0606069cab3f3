/**
 * Issue 15's figures for the bus journal (single-daemon mode), measured on the bus with a journal
 * in a temp folder on the machine's disk:
 *
 *   - inject_accepted_per_s: injections answered (the 202's promise kept: journaled, and synced as
 *     the mode says) per second, 64 callers at once, with the default `fsync: batch`, with `off` in
 *     the same run (the floor: the journal written but never waited for) and with `always`;
 *   - restart_recovery_ms: 10,000 messages accepted and never handled, from opening the journal to
 *     all of them queued again (and _handled_ms: until a no-op handler has run them all);
 *   - the hot path: pipeline passes per second and hop latency of a self-looping listener with the
 *     journal (every hop appended, and marked handled) beside the same without one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Bus } from '../src/bus/bus.ts';
import { type FsyncMode, Journal } from '../src/bus/journal/journal.ts';
import { MemoryTransport } from '../src/bus/transport/memory.ts';
import type { BusSection, LimitsSection } from '../src/config/types.ts';
import { BusyError } from '../src/errors.ts';
import { defineListener } from '../src/listener/types.ts';
import { percentile, round } from './support.ts';
import { PING, pingerSpec } from './support-bus.ts';

const LIMITS: LimitsSection = {
  max_message_bytes: 1_048_576,
  max_xml_depth: 64,
  max_xml_elements: 10_000,
  max_attributes: 64,
  max_text_length: 1_048_576,
  max_thread_hops: 1_000_000,
  max_call_depth: 1_000_000,
  handler_timeout_ms: 30_000,
  max_history_per_thread: 100,
  thread_idle_ms: 600_000,
};

const busSection = (queueLength: number) =>
  ({
    transport: 'memory',
    group: 'bench',
    queue_length: queueLength,
    max_concurrent: 16,
    drain_timeout_ms: 1_000,
    max_deliveries: 5,
  }) as BusSection;

const PAYLOAD = '<ping><text>Hello, Ada!</text><n>1</n></ping>';

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const rates: Partial<Record<FsyncMode, number>> = {};
  for (const mode of ['off', 'batch', 'always', 'off', 'batch'] as const) {
    // Each mode twice where it matters, best kept: the first pass warms the JIT.
    rates[mode] = Math.max(rates[mode] ?? 0, await injectRate(mode));
  }
  yield {
    name: 'durability_inject',
    inject_accepted_per_s: round(rates.batch!, 0),
    inject_accepted_per_s_fsync_off: round(rates.off!, 0),
    inject_accepted_per_s_fsync_always: round(rates.always!, 0),
    ratio_default_to_off: round(rates.batch! / rates.off!, 2),
    target_ratio: 0.5,
    callers: 64,
  };

  const recovery = await restartRecovery(10_000);
  yield { name: 'durability_recovery', ...recovery, target_ms: 2_000 };

  const plain = await hops(false);
  const journaled = await hops(true);
  yield {
    name: 'durability_hops',
    pipeline_passes_per_s_journaled: round(journaled.passes, 0),
    pipeline_passes_per_s_no_journal: round(plain.passes, 0),
    hop_latency_us_p50_journaled: round(journaled.p50, 1),
    hop_latency_us_p50_no_journal: round(plain.p50, 1),
    hop_latency_us_p99_journaled: round(journaled.p99, 1),
  };
}

async function journaledBus(
  dir: string,
  fsync: FsyncMode,
  handler: (p: { text: string; n: number }, ctx: { send(to: string, payload: unknown): unknown }) => unknown,
  queueLength = 100_000,
): Promise<{ bus: Bus; journal: Journal }> {
  const journal = await Journal.open({ dir, fsync });
  const bus = new Bus(
    [pingerSpec(defineListener<{ text: string; n: number }>({ payload: PING, handler: handler as never }))],
    new MemoryTransport({ journal }),
    { limits: LIMITS, bus: busSection(queueLength), logger: pino({ level: 'silent' }) },
  );
  bus.start();
  return { bus, journal };
}

/** Injections accepted per second by 64 callers for ~1.5 s, with the journal in `mode`. */
async function injectRate(mode: FsyncMode): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-bench-journal-'));
  // A handler that finishes a loop turn later: a message handled before its record is written
  // costs no line at all (see journal.ts), so a no-op handler would measure no disk.
  const { bus } = await journaledBus(dir, mode, () => new Promise<void>((resolve) => setImmediate(resolve)));
  const ms = 1_500;
  let accepted = 0;
  const start = performance.now();
  const deadline = start + ms;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < deadline) {
        try {
          await bus.inject({ to: 'pinger', payload: PAYLOAD });
          accepted++;
        } catch (error) {
          // A full queue is backpressure (the API answers 429): a caller waits a turn and retries.
          // On a fast machine 64 callers outrun the handler past the 100,000-message queue.
          if (!(error instanceof BusyError)) throw error;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  await bus.stop(5_000);
  await rm(dir, { recursive: true, force: true });
  return accepted / seconds;
}

/** `count` messages accepted by a listener that never finishes, then a restart on the same journal. */
async function restartRecovery(count: number): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-bench-journal-'));
  const stuck = await journaledBus(dir, 'batch', () => new Promise(() => {}));
  await Promise.all(
    Array.from({ length: 100 }, async (_, i) => {
      for (let j = i; j < count; j += 100) await stuck.bus.inject({ to: 'pinger', payload: PAYLOAD });
    }),
  );
  // The crash: the first bus is left as it is; its journal has every message, none handled.
  await stuck.journal.durable();
  let handled = 0;
  let allHandled: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allHandled = resolve;
  });
  const start = performance.now();
  const { bus, journal } = await journaledBus(dir, 'batch', () => {
    if (++handled === count) allHandled();
  });
  const read = journal.report;
  const report = bus.recover();
  const queuedMs = performance.now() - start;
  await done;
  const handledMs = performance.now() - start;
  await bus.stop(5_000);
  // The crashed bus's 16 handlers never finish: left running, their 30 s handler timeouts and the
  // redeliveries after them kept `npm run bench` from ever exiting.
  await stuck.bus.stop(0);
  await rm(dir, { recursive: true, force: true });
  return {
    pending: report.recovered,
    restart_recovery_ms: round(queuedMs, 0),
    journal_read_ms: read.ms,
    restart_recovery_handled_ms: round(handledMs, 0),
  };
}

/** A self-looping listener, 8 threads of 25,000 hops (passes/s), then one thread's hop gaps. */
async function hops(withJournal: boolean): Promise<{ passes: number; p50: number; p99: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-bench-journal-'));
  const perThread = 25_000;
  const finished = new Map<string, () => void>();
  let calls = 0;
  let stamps: bigint[] | undefined;
  const handler = (p: { text: string; n: number }, ctx: { send(to: string, payload: unknown): unknown }) => {
    calls++;
    stamps?.push(process.hrtime.bigint());
    if (p.n >= perThread) {
      finished.get(p.text)?.();
      return;
    }
    return ctx.send('pinger', { text: p.text, n: p.n + 1 });
  };
  let bus: Bus;
  if (withJournal) bus = (await journaledBus(dir, 'batch', handler, 1_000)).bus;
  else {
    bus = new Bus(
      [pingerSpec(defineListener<{ text: string; n: number }>({ payload: PING, handler: handler as never }))],
      new MemoryTransport(),
      { limits: LIMITS, bus: busSection(1_000), logger: pino({ level: 'silent' }) },
    );
    bus.start();
  }
  // Keyed by the text each thread carries: with a journal, the 202 may come after a fast chain ended.
  let next = 0;
  const loop = (threads: number) =>
    Promise.all(
      Array.from({ length: threads }, async () => {
        const text = `t${next++}`;
        const ended = new Promise<void>((resolve) => finished.set(text, resolve));
        await bus.inject({ to: 'pinger', payload: `<ping><text>${text}</text><n>1</n></ping>` });
        await ended;
      }),
    );
  await loop(8); // warm-up
  const before = calls;
  const start = process.hrtime.bigint();
  await loop(8);
  const passes = (calls - before) / (Number(process.hrtime.bigint() - start) / 1e9);
  stamps = [];
  await loop(1);
  const gaps = new Float64Array(stamps.length - 1);
  for (let i = 1; i < stamps.length; i++) gaps[i - 1] = Number(stamps[i]! - stamps[i - 1]!) / 1000;
  gaps.sort();
  await bus.stop(5_000);
  await rm(dir, { recursive: true, force: true });
  return { passes, p50: percentile(gaps, 50), p99: percentile(gaps, 99) };
}
