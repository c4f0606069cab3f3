/**
 * The writer with checkpoints (log.ts, checkpoint.ts, continuity.ts, writer-lock.ts) and the full
 * verify (verify.ts), on real files: two writers on one log stay one chain with one checkpoint
 * chain; a change under a writer is a threat, refuses (or only warns) and is lifted by an
 * acknowledgement; a log from before identities is adopted; verify names what a checkpoint shows.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chainLine } from '../../src/audit/chain.ts';
import { type AuditKey, AuditKeyring, parseAuditKeys } from '../../src/audit/key.ts';
import { type AuditCheckpointOptions, AuditLog } from '../../src/audit/log.ts';
import { verifyAuditLog } from '../../src/audit/verify.ts';
import { record } from './records.ts';

const KEY = parseAuditKeys('checkpoint-test-key-'.padEnd(64, 'c'), 'test')[0] as AuditKey;
const ring = () => new AuditKeyring([KEY], 'test');

async function setup(options: Partial<AuditCheckpointOptions> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'organism-checkpoints-'));
  const path = join(dir, 'audit.jsonl');
  const file = join(dir, 'checkpoints', 'log.jsonl');
  const reports: string[] = [];
  const make = () =>
    new AuditLog({
      path,
      keys: ring(),
      onError: () => {},
      checkpoints: {
        file,
        organism: 'unit',
        everyRecords: 5,
        intervalMs: 60_000,
        pollMs: 20,
        report: (level, message) => reports.push(`${level}: ${message}`),
        ...options,
      },
    });
  const verify = () => verifyAuditLog({ log: path, checkpoints: file, organism: 'unit', keys: [KEY] });
  const lines = async () =>
    (await readFile(path, 'utf8'))
      .split('\n')
      .filter((l) => l)
      .map((l) => JSON.parse(l));
  return { dir, path, file, reports, make, verify, lines };
}

describe('audit log with checkpoints', () => {
  it('two writers appending at once (the daemon and tools call) keep one chain and one checkpoint chain', async () => {
    const t = await setup();
    const a = t.make();
    const b = t.make();
    await a.open();
    await b.open();
    for (let i = 0; i < 60; i++) {
      (i % 2 ? a : b).append(record(i));
      if (i % 7 === 0) await Promise.all([a.flush(), b.flush()]);
    }
    await Promise.all([a.flush(), b.flush()]);
    await a.close();
    await b.close();
    const report = await t.verify();
    expect(report.problems).toEqual([]);
    expect(report.chain).toMatchObject({ ok: true, records: 61 });
    expect((await t.lines()).filter((r) => r.type === 'threat')).toEqual([]);
    expect(t.reports).toEqual([]);
    expect(report.last).toMatchObject({ records: 61, organism: 'unit', changed: null });
    expect(report.checkpoints).toBeGreaterThan(5);
  });

  it('a cut under a running writer: threat, refusal, and the acknowledgement lifts it', async () => {
    const t = await setup();
    const log = t.make();
    for (let i = 0; i < 4; i++) log.append(record(i));
    await log.flush();
    expect(log.refusal()).toBeUndefined();
    const text = await readFile(t.path, 'utf8');
    await writeFile(t.path, `${text.trimEnd().split('\n').slice(0, -1).join('\n')}\n`);
    log.append(record(9));
    await log.flush();
    expect(log.refusal()).toMatch(/shorter than .*organism audit --acknowledge/);
    expect(t.reports.join('\n')).toMatch(/^error: AUDIT LOG CHANGED: .* bytes shorter than/);
    const records = await t.lines();
    expect(records.at(-2)).toMatchObject({ type: 'threat', kind: 'audit_log', tool: '' });
    expect((await t.verify()).problems.join('\n')).toMatch(/^CHANGED: /);
    // The operator, from another process (another AuditLog here), acknowledges.
    const operator = t.make();
    const { was } = await operator.acknowledge('ops', 'INC-1');
    await operator.close();
    expect(was).toMatch(/shorter than/);
    await expect.poll(() => log.refusal(), { timeout: 2000 }).toBeUndefined();
    expect(t.reports.at(-1)).toMatch(/^info: audit log change acknowledged by ops/);
    log.append(record(10));
    await log.close();
    const after = await t.verify();
    expect(after.problems).toEqual([]);
    expect(after.notes.join('\n')).toContain('acknowledged by ops');
  });

  it('on_change: warn records the threat and reports it, but does not refuse', async () => {
    const t = await setup({ onChange: 'warn' });
    const log = t.make();
    log.append(record(0));
    await log.flush();
    await writeFile(t.path, '');
    log.append(record(1));
    await log.close();
    expect(log.refusal()).toBeUndefined();
    expect(t.reports.join('\n')).toContain('AUDIT LOG CHANGED');
    const records = await t.lines();
    expect(records.map((r) => r.type)).toEqual(['log', 'threat', 'call']);
    // The open change is still verify's to report.
    expect((await t.verify()).problems.join('\n')).toContain('CHANGED');
  });

  it('a log from before identities is adopted: an identity record naming the records before it', async () => {
    const t = await setup();
    let prev: string | undefined;
    const old: string[] = [];
    for (let i = 0; i < 3; i++) {
      prev = chainLine(record(i), prev, KEY);
      old.push(prev);
    }
    await writeFile(t.path, `${old.join('\n')}\n`);
    expect((await t.verify()).notes.join('\n')).toContain('written before checkpoints');
    const log = t.make();
    log.append(record(3));
    await log.close();
    const records = await t.lines();
    expect(records[3]).toMatchObject({ type: 'log', organism: 'unit', adopted: 3 });
    expect(t.reports).toEqual([]);
    const report = await t.verify();
    expect(report.problems).toEqual([]);
    expect(report.chain).toMatchObject({ ok: true, records: 5 });
  });

  it('verify: a checkpointed record changed in place, a cut at the end, a deleted log', async () => {
    const t = await setup();
    const log = t.make();
    for (let i = 0; i < 6; i++) log.append(record(i));
    await log.close();
    const text = await readFile(t.path, 'utf8');
    const lines = text.trimEnd().split('\n');
    // Lines 5-7 cut and re-chained by someone with the key (a writer that chained on in silence).
    let prev = lines[3];
    const rechained = [lines.slice(0, 4).join('\n')];
    for (let i = 20; i < 23; i++) {
      prev = chainLine(record(i), prev, KEY);
      rechained.push(prev);
    }
    await writeFile(t.path, `${rechained.join('\n')}\n`);
    const middle = await t.verify();
    expect(middle.chain.ok).toBe(true);
    expect(middle.problems.join('\n')).toMatch(/CUT: .*:7: record 7 is not the one checkpoint \d+/);
    await writeFile(t.path, `${lines.slice(0, 5).join('\n')}\n`);
    expect((await t.verify()).problems.join('\n')).toMatch(
      /CUT: .* has 5 records, but checkpoint \d+ .* says 7/,
    );
    await writeFile(t.path, '');
    expect((await t.verify()).problems.join('\n')).toMatch(/MISSING: .* is empty, but checkpoint/);
  });

  it('a forged last checkpoint (not sealed with the key) is a change, not a reference', async () => {
    const t = await setup();
    const log = t.make();
    log.append(record(0));
    await log.close();
    const cps = await readFile(t.file, 'utf8');
    await writeFile(
      t.file,
      `${cps}${cps.trimEnd().split('\n').at(-1)?.replace('"records":2', '"records":1')}\n`,
    );
    const next = t.make();
    await next.open();
    expect(next.refusal()).toMatch(/last audit checkpoint .* does not match its own hash/);
    await next.close();
    expect((await t.verify()).problems.join('\n')).toMatch(/CHECKPOINTS BROKEN/);
  });
});
