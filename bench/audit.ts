/**
 * audit_write_us_per_record: what the audit writer costs per record, as the dispatcher uses it:
 * a batch of tool-call records appended to a real keyed AuditLog in a temp dir (chained, sealed
 * with HMAC, gathered into one write) and flushed; wall and CPU time of the whole batch divided by
 * its records, p50 over batches. The floor, in the same run and alternating with it: the same
 * records JSON.stringify'd and written with one appendFile on an open handle (no chain, no seal),
 * i.e. what serialising and the file write alone cost. CPU is process CPU (process.cpuUsage: the
 * main thread plus libuv's file threads), main_thread is the event loop's active time (what blocks
 * other work), wall is the time from the first append to flush's end. single_record_: the same
 * with one record per batch (a call after a quiet spell), so mostly the per-batch cost.
 * BATCH=40 by default: MCP calls at ~120 µs each fill the 5 ms gathering window with about that.
 * checkpointed_: the same records through an AuditLog with identity and checkpoints (the daemon's:
 * a checkpoint every 1000 records or 5 s, each after an fdatasync of the log; the continuity check
 * per write), measured in the same batches, alternating with the two above; `_mean_` beside the
 * p50 because a checkpoint falls in one batch of 25. checkpoint_ratio: its p50 over the plain log's
 * (the target: at most 1.2).
 */
import { randomUUID } from 'node:crypto';
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AuditKeyring, parseAuditKeys } from '../src/audit/key.ts';
import { AuditLog } from '../src/audit/log.ts';
import { verifyAuditFile } from '../src/audit/read.ts';
import type { CallRecord } from '../src/audit/record.ts';
import { verifyAuditLog } from '../src/audit/verify.ts';
import { percentile, round } from './support.ts';

const BATCH = Number(process.env.BATCH ?? 40);
const BATCHES = Number(process.env.BATCHES ?? 400);
const WARMUP = 50;

/** Records as the dispatcher writes them for an MCP echo call (time and ids differ per record). */
function records(count: number): CallRecord[] {
  const base = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    type: 'call',
    time: new Date(base + i).toISOString(),
    thread: randomUUID(),
    listener: 'caller',
    trust: 'medium',
    tool: 'every.echo',
    call_id: randomUUID(),
    input: { message: `hello ${i}` },
    segment: null,
    verdict: null,
    rule_id: null,
    reason: null,
    suggestion: null,
    outcome: 'ok',
    code: null,
    message: null,
    duration_ms: 0.1234 + i / 1000,
  }));
}

interface Sample {
  wallUs: number;
  cpuUs: number;
  loopUs: number;
}

async function measure(records: number, work: () => Promise<void>): Promise<Sample> {
  const cpu = process.cpuUsage();
  const loop = performance.eventLoopUtilization();
  const start = performance.now();
  await work();
  const wallUs = ((performance.now() - start) * 1000) / records;
  // The loop's active time: the main thread busy (not waiting in the poll for the file threads).
  const busy = performance.eventLoopUtilization(loop);
  const used = process.cpuUsage(cpu);
  return { wallUs, cpuUs: (used.user + used.system) / records, loopUs: (busy.active * 1000) / records };
}

function p50(samples: Sample[], field: keyof Sample): number {
  return round(
    percentile(
      samples.map((s) => s[field]).sort((a, b) => a - b),
      50,
    ),
    2,
  );
}

/** `batches` batches of `size` records, each through the log and then through the floor. */
async function series(
  log: AuditLog,
  floorHandle: FileHandle,
  size: number,
  batches: number,
  checkpointed: AuditLog,
): Promise<{ audit: Sample[]; floor: Sample[]; checkpointed: Sample[] }> {
  const audit: Sample[] = [];
  const floor: Sample[] = [];
  const tracked: Sample[] = [];
  for (let b = 0; b < WARMUP + batches; b++) {
    // Fresh records per batch, made before the clock starts.
    const forLog = records(size);
    const forFloor = records(size);
    const forTracked = records(size);
    const a = await measure(size, async () => {
      for (const record of forLog) log.append(record);
      await log.flush();
    });
    const c = await measure(size, async () => {
      for (const record of forTracked) checkpointed.append(record);
      await checkpointed.flush();
    });
    const f = await measure(size, async () => {
      let text = '';
      for (const record of forFloor) text += `${JSON.stringify(record)}\n`;
      await floorHandle.appendFile(text, 'utf8');
    });
    if (b >= WARMUP) {
      audit.push(a);
      floor.push(f);
      tracked.push(c);
    }
  }
  return { audit, floor, checkpointed: tracked };
}

function mean(samples: Sample[], field: keyof Sample): number {
  return round(samples.reduce((sum, s) => sum + s[field], 0) / samples.length, 2);
}

function figures(
  prefix: string,
  { audit, floor, checkpointed }: { audit: Sample[]; floor: Sample[]; checkpointed: Sample[] },
) {
  return {
    [`${prefix}checkpointed_us_per_record`]: p50(checkpointed, 'wallUs'),
    [`${prefix}checkpointed_main_thread_us_per_record`]: p50(checkpointed, 'loopUs'),
    [`${prefix}checkpointed_cpu_us_per_record`]: p50(checkpointed, 'cpuUs'),
    [`${prefix}mean_us_per_record`]: mean(audit, 'wallUs'),
    [`${prefix}checkpointed_mean_us_per_record`]: mean(checkpointed, 'wallUs'),
    [`${prefix}checkpoint_ratio`]: round(p50(checkpointed, 'wallUs') / p50(audit, 'wallUs'), 2),
    [`${prefix}us_per_record`]: p50(audit, 'wallUs'),
    [`${prefix}main_thread_us_per_record`]: p50(audit, 'loopUs'),
    [`${prefix}cpu_us_per_record`]: p50(audit, 'cpuUs'),
    [`${prefix}floor_us_per_record`]: p50(floor, 'wallUs'),
    [`${prefix}floor_main_thread_us_per_record`]: p50(floor, 'loopUs'),
    [`${prefix}floor_cpu_us_per_record`]: p50(floor, 'cpuUs'),
  };
}

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-bench-audit-'));
  const ring = new AuditKeyring(parseAuditKeys('bench-audit-key-'.padEnd(64, '0'), 'bench'), 'bench');
  const path = join(dir, 'audit.jsonl');
  const log = new AuditLog({ path, keys: ring });
  const trackedPath = join(dir, 'checkpointed.jsonl');
  const checkpointed = new AuditLog({
    path: trackedPath,
    keys: ring,
    checkpoints: { file: join(dir, 'checkpoints', 'bench.jsonl'), organism: 'bench' },
  });
  let floorHandle: FileHandle | undefined;
  const written = (WARMUP + BATCHES) * BATCH + WARMUP + BATCHES * 4;
  try {
    floorHandle = await open(join(dir, 'floor.jsonl'), 'a', 0o600);
    await checkpointed.open();
    const gathered = await series(log, floorHandle, BATCH, BATCHES, checkpointed);
    // A record after a quiet spell is written alone: what one batch costs beyond its records.
    const single = await series(log, floorHandle, 1, BATCHES * 4, checkpointed);
    await log.close();
    await checkpointed.close();
    const report = await verifyAuditFile(path, ring.keys);
    const full = await verifyAuditLog({
      log: trackedPath,
      checkpoints: checkpointed.checkpointFile,
      organism: 'bench',
      keys: ring.keys,
    });
    if (!full.chain.ok || full.problems.length > 0 || full.chain.records !== written + 1)
      throw new Error(`the bench's checkpointed log does not verify: ${JSON.stringify(full)}`);

    if (!report.ok || report.records !== written)
      throw new Error(`the bench's audit log does not verify: ${JSON.stringify(report)}`);
    yield {
      bench: 'audit',
      ...figures('audit_write_', gathered),
      ...figures('single_record_write_', single),
      records_per_batch: BATCH,
      batches: BATCHES,
      includes:
        'keyed AuditLog: queue, gather, stat, chain (SHA-256 of the previous line), HMAC seal, one append per batch; checkpointed: the same with identity, continuity check and checkpoints (every 1000 records / 5 s, fdatasync first) and the writer lock; floor: JSON.stringify + one appendFile',
    };
  } finally {
    await floorHandle?.close();
    await log.close();
    await checkpointed.close();
    await rm(dir, { recursive: true, force: true });
  }
}
