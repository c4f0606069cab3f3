/**
 * The audit log: one chained line per record, written in order, nothing dropped, tampering found.
 * Writers here seal with a key as the daemon does; keyed.test.ts has the attacks on the key.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/audit/chain.ts';
import { AuditKeyring, parseAuditKeys } from '../../src/audit/key.ts';
import { AuditLog } from '../../src/audit/log.ts';
import { readAuditLines, verifyAuditFile } from '../../src/audit/read.ts';
import { until } from '../../src/testing/index.ts';
import { record } from './records.ts';

const ring = new AuditKeyring(parseAuditKeys('log-test-key-'.padEnd(64, '0'), 'test'), 'test');
const keyId = ring.current.id;

async function temp(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'organism-audit-'));
}

describe('AuditLog', () => {
  it('writes records in order, each chained to the one before', async () => {
    const dir = await temp();
    const path = join(dir, 'nested', 'audit.jsonl');
    const log = new AuditLog({ path, keys: ring });
    for (let i = 0; i < 50; i++) log.append(record(i));
    await log.close();
    const lines = await readAuditLines(path);
    expect(lines).toHaveLength(50);
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed.map((r) => r.call_id)).toEqual(Array.from({ length: 50 }, (_, i) => `c${i}`));
    expect(parsed[0].prev).toBeNull();
    expect(parsed[1].prev).toMatch(/^[0-9a-f]{64}$/);
    expect(parsed.every((r) => /^[0-9a-f]{64}$/.test(r.hash))).toBe(true);
    expect(parsed.every((r) => r.key_id === keyId)).toBe(true);
    expect(await verifyAuditFile(path, ring.keys)).toEqual({
      ok: true,
      verdict: 'intact',
      records: 50,
      keyed: 50,
      unkeyed: 0,
      keys: [keyId],
      head: parsed[49].hash,
    });
    expect(await readAuditLines(path, 3)).toEqual(lines.slice(47));
  });

  it('continues the chain across a restart and across another writer appending in between', async () => {
    const dir = await temp();
    const path = join(dir, 'audit.jsonl');
    const first = new AuditLog({ path, keys: ring });
    first.append(record(1));
    await first.flush();
    const second = new AuditLog({ path, keys: ring }); // e.g. `organism tools call` next to the daemon
    second.append(record(2));
    await second.flush();
    first.append(record(3));
    await first.close();
    await second.close();
    const restarted = new AuditLog({ path, keys: ring });
    restarted.append(record(4));
    await restarted.close();
    const lines = await readAuditLines(path);
    expect(lines.map((l) => JSON.parse(l).call_id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(await verifyAuditFile(path, ring.keys)).toEqual({
      ok: true,
      verdict: 'intact',
      records: 4,
      keyed: 4,
      unkeyed: 0,
      keys: [keyId],
      head: JSON.parse(lines[3] as string).hash,
    });
  });

  // An unkeyed log (from before audit keys): plain edits are still found, but a whole log that links
  // is reported as `unkeyed`, never intact (keyed.test.ts: the same attacks on a keyed log).
  it('finds a changed record, a re-hashed record, a removed record and a removed head', async () => {
    const dir = await temp();
    const path = join(dir, 'audit.jsonl');
    const log = new AuditLog({ path });
    for (let i = 0; i < 5; i++) log.append(record(i, { outcome: i === 2 ? 'refused' : 'ok' }));
    await log.close();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');

    const edited = [...lines];
    edited[2] = (edited[2] as string).replace('"refused"', '"ok"');
    expect(verifyChain(edited.join('\n'))).toMatchObject({ ok: false, line: 3, records: 2 });
    expect(verifyChain(edited.join('\n'))).toMatchObject({
      reason: expect.stringContaining('does not match its own hash'),
    });

    // An attacker who also recomputes the edited line's own hash breaks the next line's link.
    const { chainLine } = await import('../../src/audit/chain.ts');
    const forged = JSON.parse(edited[2] as string);
    delete forged.hash;
    const prevLine = lines[1] as string;
    const { prev: _p, ...entry } = forged;
    const rehashed = [...lines];
    rehashed[2] = chainLine(entry, prevLine);
    expect(verifyChain(rehashed.join('\n'))).toMatchObject({ ok: false, line: 4 });

    const removed = lines.filter((_, i) => i !== 3);
    expect(verifyChain(removed.join('\n'))).toMatchObject({ ok: false, line: 4 });

    const headless = lines.slice(1);
    expect(verifyChain(headless.join('\n'))).toMatchObject({ ok: false, line: 1 });
    expect(verifyChain(lines.join('\n'))).toEqual({
      ok: false,
      verdict: 'unkeyed',
      records: 5,
      keyed: 0,
      unkeyed: 5,
      keys: [],
      head: JSON.parse(lines[4] as string).hash,
    });
  });

  it('keeps records and says so loudly when the file cannot be written, then writes them when it can', async () => {
    const dir = await temp();
    const path = join(dir, 'audit.jsonl');
    await mkdir(path); // a directory where the file should be: every write fails
    const errors: string[] = [];
    const log = new AuditLog({ path, onError: (m) => errors.push(m), retryMs: 20 });
    log.append(record(1));
    log.append(record(2));
    await expect(log.flush()).rejects.toThrow(/cannot write the audit log .*2 record\(s\) still queued/);
    expect(log.pending).toBe(2);
    expect(errors.some((e) => e.startsWith(`CANNOT WRITE AUDIT LOG ${path}`))).toBe(true);
    await rm(path, { recursive: true });
    log.append(record(3));
    // The retry timer writes the queue without anyone calling flush.
    await until(() => log.pending === 0, 'the retry timer to write the queue');
    await log.close();
    expect((await readAuditLines(path)).map((l) => JSON.parse(l).call_id)).toEqual(['c1', 'c2', 'c3']);
    expect(errors.at(-1)).toContain('writable again');
  });

  it('starts a fresh line after a line cut short by a crash, and verify names the cut line', async () => {
    const dir = await temp();
    const path = join(dir, 'audit.jsonl');
    const log = new AuditLog({ path, keys: ring });
    log.append(record(1));
    await log.close();
    await writeFile(path, `${await readFile(path, 'utf8')}{"type":"call","ti`);
    const again = new AuditLog({ path, keys: ring });
    again.append(record(2));
    await again.close();
    const lines = await readAuditLines(path);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2] as string).call_id).toBe('c2');
    expect(await verifyAuditFile(path, ring.keys)).toMatchObject({ ok: false, line: 2 });
  });

  it('a missing file verifies as empty', async () => {
    expect(await verifyAuditFile(join(await temp(), 'none.jsonl'))).toEqual({
      ok: true,
      verdict: 'intact',
      records: 0,
      keyed: 0,
      unkeyed: 0,
      keys: [],
      head: null,
    });
  });
});
