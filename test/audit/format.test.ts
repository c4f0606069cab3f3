/**
 * The audit log's bytes are its format: verify, other tools and older daemons read these lines, so
 * a change in how the writer builds them (faster serialising, sealing, caching the last line) must
 * not move a byte. format-fixture.json holds what the writer wrote for these scenarios before the
 * writer was made cheaper per record (captured by commit 74a564a with the writer of that time; refresh it only
 * for a deliberate format change: ORGANISM_UPDATE_AUDIT_FIXTURE=1 npx vitest run test/audit/format).
 * Time is fixed (the rotation record carries the time it is written), keys are fixed strings.
 */
import { createHash, createHmac } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chainLine, verifyChain } from '../../src/audit/chain.ts';
import { type AuditKey, AuditKeyring, parseAuditKeys } from '../../src/audit/key.ts';
import { AuditLog } from '../../src/audit/log.ts';
import type { AuditEntry } from '../../src/audit/record.ts';
import { record } from './records.ts';

const FIXTURE = new URL('./format-fixture.json', import.meta.url);
const SEEDS = ['format-key-one-', 'format-key-two-', 'format-key-three-'].map((s) => s.padEnd(48, 'k'));
const keyOf = (seed: string): AuditKey => parseAuditKeys(seed, 'test')[0] as AuditKey;
const [K1, K2, K3] = SEEDS.map(keyOf) as [AuditKey, AuditKey, AuditKey];
const ringOf = (...keys: AuditKey[]) => new AuditKeyring(keys, 'test');

/** Entries whose JSON exercises escaping, number forms, dropped undefineds, nesting and non-ASCII. */
function entries(): AuditEntry[] {
  return [
    record(0),
    record(1, {
      input: {
        text: 'quote " backslash \\ tab \t newline \n nul \u0000 del \u007f </script>',
        unicode: 'é ü 漢字 emoji 🦀 lone \ud800 surrogate',
        numbers: [0, -0, 1e21, 1e-7, 0.1 + 0.2, Number.NaN, Number.POSITIVE_INFINITY, -12.5],
        nested: { a: [{ b: null }, [], {}], empty: '', undef: undefined },
      },
      segment: 'ls -la "/tmp/x y"',
      verdict: 'warn',
      rule_id: 'shell.r1',
      reason: 'why: ünïcödé',
      suggestion: null,
      outcome: 'refused',
      code: 'PermissionDenied',
      message: 'multi\nline',
      duration_ms: 1234.5678,
    }),
    {
      type: 'threat',
      time: '2026-01-02T03:04:05.006Z',
      kind: 'integrity',
      tool: 'x',
      reason: 'r',
      module: null,
    },
    {
      type: 'change',
      time: '2026-01-02T03:04:05.007Z',
      action: 'organism.reloaded',
      by: 'sighup',
      listener: null,
      thread: null,
      detail: '1 added',
    },
    {
      type: 'approval',
      time: '2026-01-02T03:04:05.008Z',
      decision: 'approved',
      approval: 'a1',
      call_id: 'c1',
      thread: 't1',
      listener: 'l',
      tool: 'noop',
      by: 'anonymous',
      reason: null,
    },
    // What a caller may hand over at run time beyond the type: an undefined member, extra members,
    // members that the chain itself writes (prev, key_id, hash) and integer-like keys.
    { ...record(5), segment: undefined } as unknown as AuditEntry,
    { ...record(6), extra: { deep: [1, 'two'] }, 7: 'integer key' } as unknown as AuditEntry,
    { prev: 'forged', key_id: 'deadbeef', ...record(7) } as unknown as AuditEntry,
    { ...record(8), hash: 'forged' } as unknown as AuditEntry,
  ];
}

/** Each scenario writes through real AuditLogs into `dir` and returns the file's text. */
const SCENARIOS: Record<string, (dir: string) => Promise<string>> = {
  async keyed(dir) {
    const path = join(dir, 'keyed.jsonl');
    const log = new AuditLog({ path, keys: ringOf(K1) });
    const all = entries();
    log.append(all[0] as AuditEntry); // a batch of one
    await log.flush();
    for (const entry of all.slice(1)) log.append(entry); // then a gathered batch
    await log.flush();
    for (let i = 10; i < 40; i++) log.append(record(i)); // and a longer one
    await log.close();
    return readFile(path, 'utf8');
  },
  async unkeyed(dir) {
    const path = join(dir, 'unkeyed.jsonl');
    const log = new AuditLog({ path });
    for (const entry of entries()) log.append(entry);
    await log.close();
    return readFile(path, 'utf8');
  },
  async 'another writer in between'(dir) {
    const path = join(dir, 'two.jsonl');
    const a = new AuditLog({ path, keys: ringOf(K1) });
    const b = new AuditLog({ path, keys: ringOf(K1) });
    for (let i = 0; i < 6; i++) {
      const log = i % 3 === 1 ? b : a;
      log.append(record(i, { listener: i % 3 === 1 ? 'b' : 'a' }));
      await log.flush();
    }
    // A line by hand, with non-ASCII, as some other tool might append it (sizes in bytes matter).
    await appendFile(path, `${chainLine(record(50, { reason: 'ß→✓' }), await lastLine(path), K1)}\n`);
    a.append(record(51));
    await a.close();
    await b.close();
    return readFile(path, 'utf8');
  },
  async 'rotation at restart and in process'(dir) {
    const path = join(dir, 'rotation.jsonl');
    const first = new AuditLog({ path, keys: ringOf(K1) });
    for (let i = 0; i < 3; i++) first.append(record(i));
    await first.close();
    const second = new AuditLog({ path, keys: ringOf(K1, K2) });
    second.append(record(3));
    await second.flush();
    second.append(record(4));
    await second.close();
    // A ring backed by a file that another process rotates while this writer runs.
    const keyFile = join(dir, 'keys');
    await writeFile(keyFile, `${SEEDS[0]}\n${SEEDS[1]}\n`);
    const ring = new AuditKeyring([K1, K2], keyFile, keyFile);
    const third = new AuditLog({ path, keys: ring });
    third.append(record(5));
    await third.flush();
    await writeFile(keyFile, `${SEEDS[0]}\n${SEEDS[1]}\n${SEEDS[2]}\n`);
    await ring.refresh();
    third.append(record(6));
    third.append(record(7));
    await third.close();
    return readFile(path, 'utf8');
  },
  async 'cut line and old unkeyed lines'(dir) {
    const path = join(dir, 'cut.jsonl');
    const old = new AuditLog({ path });
    for (let i = 0; i < 2; i++) old.append(record(i));
    await old.close();
    const keyed = new AuditLog({ path, keys: ringOf(K1), onError: () => {} });
    keyed.append(record(2));
    await keyed.flush();
    await appendFile(path, '{"type":"call","ti');
    keyed.append(record(3));
    await keyed.flush();
    keyed.append(record(4));
    await keyed.close();
    return readFile(path, 'utf8');
  },
};

async function lastLine(path: string): Promise<string | undefined> {
  return (await readFile(path, 'utf8')).trimEnd().split('\n').at(-1);
}

async function writeAll(): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-audit-format-'));
  try {
    const out: Record<string, string> = {};
    for (const [name, scenario] of Object.entries(SCENARIOS)) out[name] = await scenario(dir);
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** chainLine as it was written before the writer was made cheaper: the literal construction. */
function literalChainLine(entry: unknown, prevLine: string | undefined, key?: AuditKey): string {
  const prev = prevLine === undefined ? null : createHash('sha256').update(prevLine, 'utf8').digest('hex');
  if (key === undefined) {
    const body = JSON.stringify({ ...(entry as object), prev });
    return `${body.slice(0, -1)},"hash":"${createHash('sha256').update(body, 'utf8').digest('hex')}"}`;
  }
  const body = JSON.stringify({ ...(entry as object), prev, key_id: key.id });
  return `${body.slice(0, -1)},"hash":"${createHmac('sha256', key.secret).update(body, 'utf8').digest('hex')}"}`;
}

describe('audit line format', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-03-04T05:06:07.089Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes byte for byte what the writer wrote before it was made cheaper', async () => {
    const written = await writeAll();
    if (process.env.ORGANISM_UPDATE_AUDIT_FIXTURE === '1') {
      await writeFile(FIXTURE, `${JSON.stringify(written, null, 2)}\n`);
    }
    const fixture = JSON.parse(await readFile(FIXTURE, 'utf8')) as Record<string, string>;
    expect(Object.keys(written)).toEqual(Object.keys(fixture));
    for (const name of Object.keys(fixture)) {
      expect({ name, text: written[name] }).toEqual({ name, text: fixture[name] });
    }
  });

  it('chainLine gives the bytes of the literal construction for odd entries and keys of every length', () => {
    class WithToJson {
      type = 'call';
      toJSON() {
        return { replaced: true };
      }
    }
    const odd: unknown[] = [
      ...entries(),
      {},
      [1, 2],
      new WithToJson(),
      Object.assign(Object.create({ inherited: 1 }), { type: 'call', own: 2 }),
      { type: 'call', key_id: undefined },
      { type: 'call', prev: undefined, z: 1 },
      record(9, { input: { big: 'ü'.repeat(20_000) } }), // past the writer's scratch buffer
      record(10, { input: { text: '漢'.repeat(5_000) } }), // 15 000 bytes of UTF-8 in the scratch buffer
    ];
    // Secrets shorter than, equal to and longer than SHA-256's 64-byte block (longer ones are hashed).
    const keys = [undefined, ...[32, 63, 64, 65, 200].map((n) => keyOf('k'.repeat(n)))];
    expect(keys.slice(1).map((k) => k?.secret.length)).toEqual([32, 63, 64, 65, 200]);
    for (const key of keys) {
      let prev: string | undefined;
      for (const entry of odd) {
        const line = chainLine(entry as AuditEntry, prev, key);
        expect(line).toBe(literalChainLine(entry, prev, key));
        prev = line;
      }
    }
  });

  it('the fixture is what verify expects of each scenario', async () => {
    const fixture = JSON.parse(await readFile(FIXTURE, 'utf8')) as Record<string, string>;
    expect(verifyChain(fixture.keyed as string, [K1])).toMatchObject({ ok: true, records: 39 });
    // The entry that brought its own key_id: an unkeyed writer keeps it, so verify stops there.
    expect(verifyChain(fixture.unkeyed as string)).toMatchObject({ verdict: 'broken', line: 8, records: 7 });
    expect(verifyChain(fixture['another writer in between'] as string, [K1])).toMatchObject({
      ok: true,
      records: 8,
    });
    // Two switch records: K1 -> K2 at the restart, K2 -> K3 after the other process rotated.
    expect(verifyChain(fixture['rotation at restart and in process'] as string, [K1, K2, K3])).toMatchObject({
      ok: true,
      records: 10,
      keys: [K1.id, K2.id, K3.id],
    });
    // Stops at the cut line (line 4), after two unkeyed lines and one keyed.
    expect(verifyChain(fixture['cut line and old unkeyed lines'] as string, [K1])).toMatchObject({
      ok: false,
      line: 4,
      records: 3,
    });
  });
});
