/**
 * The keyed audit chain against someone who can write the file but has not got the key: records
 * removed and the chain re-hashed (plain SHA-256, a guessed key under the real key's id, a key of
 * their own) are found at the first forged line; rotation verifies; the key stays out of data_dir.
 */
import { mkdir, mkdtemp, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chainLine, verifyChain } from '../../src/audit/chain.ts';
import {
  type AuditKey,
  AuditKeyring,
  auditKeyId,
  loadAuditKeys,
  parseAuditKeys,
  rotateAuditKeyFile,
} from '../../src/audit/key.ts';
import { AuditLog } from '../../src/audit/log.ts';
import { readAuditLines, verifyAuditFile } from '../../src/audit/read.ts';
import type { AuditEntry, CallRecord } from '../../src/audit/record.ts';
import { loadConfig } from '../../src/config/index.ts';
import { record } from './records.ts';

const temp = () => mkdtemp(join(tmpdir(), 'organism-keyed-'));
const keyOf = (seed: string): AuditKey => parseAuditKeys(seed.padEnd(64, 'x'), 'test')[0] as AuditKey;
const ringOf = (...keys: AuditKey[]) => new AuditKeyring(keys, 'test');

function call(n: number, tool: string): CallRecord {
  const input = tool === 'send_email' ? { to: 'boss@example.com', subject: `report ${n}` } : { n };
  return record(n, { listener: 'mailer', tool, input, verdict: 'allow' });
}

/** Ten records; 4 and 7 (lines 4 and 7, 1-based: indexes 3 and 6) are send_email. */
async function keyedLog(key: AuditKey): Promise<{ path: string; lines: string[] }> {
  const path = join(await temp(), 'audit.jsonl');
  const log = new AuditLog({ path, keys: ringOf(key) });
  for (let i = 0; i < 10; i++) log.append(call(i, i === 3 || i === 6 ? 'send_email' : 'calculate'));
  await log.close();
  return { path, lines: await readAuditLines(path) };
}

/** What the attacker's script does: drop send_email lines, then re-chain everything from `from` on. */
function forge(lines: string[], seal: (entry: AuditEntry, prev: string | undefined) => string, from = 0) {
  const kept = lines.filter((line) => JSON.parse(line).tool !== 'send_email');
  const out = kept.slice(0, from);
  for (const line of kept.slice(from)) {
    const { prev: _p, hash: _h, key_id: _k, ...entry } = JSON.parse(line);
    out.push(seal(entry as AuditEntry, out.at(-1)));
  }
  return out.join('\n');
}

describe('keyed audit chain', () => {
  const key = keyOf('the-real-audit-key-');

  it('a log written with the key verifies, naming the key and the last hash', async () => {
    const { path, lines } = await keyedLog(key);
    expect(lines).toHaveLength(10);
    expect(lines.every((l) => JSON.parse(l).key_id === key.id)).toBe(true);
    expect(key.id).toBe(auditKeyId(key.secret));
    expect(key.id).toMatch(/^[0-9a-f]{8}$/);
    expect(await verifyAuditFile(path, [key])).toEqual({
      ok: true,
      verdict: 'intact',
      records: 10,
      keyed: 10,
      unkeyed: 0,
      keys: [key.id],
      head: JSON.parse(lines[9] as string).hash,
    });
  });

  it('records removed and the rest re-hashed with plain SHA-256 fail at the first forged line', async () => {
    const { lines } = await keyedLog(key);
    // From the first removed record on (the lines before it kept as they were).
    expect(
      verifyChain(
        forge(lines, (e, p) => chainLine(e, p), 3),
        [key],
      ),
    ).toMatchObject({
      ok: false,
      verdict: 'broken',
      line: 4,
      records: 3,
      reason: expect.stringContaining(`has no key_id after records sealed with key ${key.id}`),
    });
    // The whole file re-hashed: it links, but nothing in it is proven.
    const whole = verifyChain(
      forge(lines, (e, p) => chainLine(e, p)),
      [key],
    );
    expect(whole).toMatchObject({ ok: false, verdict: 'unkeyed', records: 8, keyed: 0, unkeyed: 8 });
    // Just removed, not re-hashed.
    const removed = lines.filter((l) => JSON.parse(l).tool !== 'send_email').join('\n');
    expect(verifyChain(removed, [key])).toMatchObject({
      ok: false,
      line: 4,
      reason: expect.stringContaining('does not chain to the line before it'),
    });
  });

  it('re-hashed with a guessed key, under the real key id or its own, fails at the first forged line', async () => {
    const { lines } = await keyedLog(key);
    const guessed = keyOf('a-guess-at-the-audit-key-');
    const posing: AuditKey = { id: key.id, secret: guessed.secret };
    for (const from of [0, 3]) {
      expect(
        verifyChain(
          forge(lines, (e, p) => chainLine(e, p, posing), from),
          [key],
        ),
      ).toMatchObject({
        ok: false,
        line: from + 1,
        reason: expect.stringContaining(`does not match its own hash (HMAC-SHA256 with key ${key.id})`),
      });
      expect(
        verifyChain(
          forge(lines, (e, p) => chainLine(e, p, guessed), from),
          [key],
        ),
      ).toMatchObject({
        ok: false,
        line: from + 1,
        reason: expect.stringContaining(
          `is sealed with key ${guessed.id}, which is not among the configured keys`,
        ),
      });
    }
    // The real key re-chains it (that is what the key is for), and nothing else does.
    expect(
      verifyChain(
        forge(lines, (e, p) => chainLine(e, p, key)),
        [key],
      ),
    ).toMatchObject({
      ok: true,
      records: 8,
    });
  });

  it('verify without the key proves nothing and says which key it needs', async () => {
    const { lines } = await keyedLog(key);
    expect(verifyChain(lines.join('\n'), [])).toMatchObject({
      ok: false,
      line: 1,
      reason: expect.stringContaining(
        `sealed with key ${key.id}, which is not among the configured keys (none found)`,
      ),
    });
  });

  it('rotation: old records verify under the old key, a switch record sealed with it, new ones under the new', async () => {
    const oldKey = keyOf('old-audit-key-');
    const newKey = keyOf('new-audit-key-');
    const path = join(await temp(), 'audit.jsonl');
    const before = new AuditLog({ path, keys: ringOf(oldKey) });
    for (let i = 0; i < 3; i++) before.append(call(i, 'calculate'));
    await before.close();
    const after = new AuditLog({ path, keys: ringOf(oldKey, newKey) });
    for (let i = 3; i < 5; i++) after.append(call(i, 'calculate'));
    await after.close();
    const lines = (await readAuditLines(path)).map((l) => JSON.parse(l));
    expect(lines.map((r) => r.key_id)).toEqual([
      oldKey.id,
      oldKey.id,
      oldKey.id,
      oldKey.id,
      newKey.id,
      newKey.id,
    ]);
    expect(lines[3]).toMatchObject({
      type: 'change',
      action: 'audit.key_rotated',
      by: 'organism',
      detail: expect.stringContaining(`${oldKey.id} -> ${newKey.id}`),
    });
    expect(await verifyAuditFile(path, [oldKey, newKey])).toMatchObject({
      ok: true,
      records: 6,
      keyed: 6,
      keys: [oldKey.id, newKey.id],
    });
    // Without the old key the old records are not proven; keys listed in the wrong order fail too.
    expect(await verifyAuditFile(path, [newKey])).toMatchObject({ ok: false, line: 1 });
    expect(await verifyAuditFile(path, [newKey, oldKey])).toMatchObject({
      ok: false,
      line: 5,
      reason: expect.stringContaining(`older than key ${oldKey.id}`),
    });
    // Someone holding only the retired key cannot append after the switch.
    const text = await readFile(path, 'utf8');
    const last = text.trimEnd().split('\n').at(-1) as string;
    const appended = `${text}${chainLine(call(9, 'send_email'), last, oldKey)}\n`;
    expect(verifyChain(appended, [oldKey, newKey])).toMatchObject({
      ok: false,
      line: 7,
      reason: expect.stringContaining(`is sealed with key ${oldKey.id}, older than key ${newKey.id}`),
    });
  });

  it('rotation of the key file: a writer with the old ring picks the new key up from the file', async () => {
    const dir = await temp();
    const keyFile = join(dir, 'config', 'audit.key');
    const options = { keyFile, dataDir: join(dir, 'data'), env: {}, create: true };
    const daemonRing = (await loadAuditKeys(options)) as AuditKeyring;
    const path = join(dir, 'data', 'audit.jsonl');
    const daemon = new AuditLog({ path, keys: daemonRing });
    daemon.append(call(1, 'calculate'));
    await daemon.flush();
    const cliRing = (await loadAuditKeys({ ...options, create: false })) as AuditKeyring;
    const { from, to } = await rotateAuditKeyFile(cliRing);
    expect(from).toBe(daemonRing.current.id);
    expect(to).not.toBe(from);
    expect(cliRing.keys.map((k) => k.id)).toEqual([from, to]);
    const cli = new AuditLog({ path, keys: cliRing }); // `organism tools call` after the rotation
    cli.append(call(2, 'send_email'));
    await cli.close();
    daemon.append(call(3, 'calculate')); // still holds only the old key: reads the file again
    await daemon.close();
    const lines = (await readAuditLines(path)).map((l) => JSON.parse(l));
    expect(lines.map((r) => [r.type, r.key_id])).toEqual([
      ['call', from],
      ['change', from],
      ['call', to],
      ['call', to],
    ]);
    expect(await verifyAuditFile(path, cliRing.keys)).toMatchObject({
      ok: true,
      records: 4,
      keys: [from, to],
    });
  });

  it('an unkeyed log from before audit keys stays "unkeyed" after keyed records follow it', async () => {
    const path = join(await temp(), 'audit.jsonl');
    const old = new AuditLog({ path });
    old.append(call(1, 'calculate'));
    old.append(call(2, 'send_email'));
    await old.close();
    const errors: string[] = [];
    const keyed = new AuditLog({ path, keys: ringOf(key), onError: (m) => errors.push(m) });
    keyed.append(call(3, 'calculate'));
    await keyed.close();
    expect(errors.join('\n')).toContain('holds records from before audit keys');
    expect(await verifyAuditFile(path, [key])).toMatchObject({
      ok: false,
      verdict: 'unkeyed',
      records: 3,
      unkeyed: 2,
      keyed: 1,
      keys: [key.id],
    });
  });
});

describe('audit keys', () => {
  it('creates the default key file outside data_dir at first start (0600 in a 0700 folder), then reuses it', async () => {
    const dir = await temp();
    const env = { XDG_CONFIG_HOME: join(dir, 'xdg') };
    const options = { dataDir: join(dir, 'data'), env };
    expect(await loadAuditKeys(options)).toBeUndefined(); // verify never creates one
    const first = (await loadAuditKeys({ ...options, create: true })) as AuditKeyring;
    const file = join(dir, 'xdg', 'organism', 'audit.key');
    expect(first.source).toBe(file);
    expect(first.created).toBe(true);
    expect(first.warning).toBeUndefined();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'xdg', 'organism'))).mode & 0o777).toBe(0o700);
    expect((await readFile(file, 'utf8')).trimEnd().split('\n').at(-1)).toMatch(/^[0-9a-f]{64}$/);
    const again = (await loadAuditKeys({ ...options, create: true })) as AuditKeyring;
    expect(again.created).toBe(false);
    expect(again.current.id).toBe(first.current.id);
  });

  it('two processes starting at once agree on one key', async () => {
    const dir = await temp();
    const options = {
      keyFile: join(dir, 'k', 'audit.key'),
      dataDir: join(dir, 'data'),
      env: {},
      create: true,
    };
    const rings = await Promise.all(Array.from({ length: 8 }, () => loadAuditKeys(options)));
    expect(new Set(rings.map((r) => r?.current.id)).size).toBe(1);
    expect(rings.filter((r) => r?.created)).toHaveLength(1);
  });

  it('the environment variable wins, holds several keys oldest first, and refuses short keys', async () => {
    const dir = await temp();
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(64);
    const ring = (await loadAuditKeys({
      dataDir: dir,
      keyEnv: 'MY_AUDIT_KEY',
      keyFile: join(dir, '..', 'never-read.key'),
      env: { MY_AUDIT_KEY: `${a}, ${b}` },
    })) as AuditKeyring;
    expect(ring.source).toBe('environment variable MY_AUDIT_KEY');
    expect(ring.keys.map((k) => k.id)).toEqual([auditKeyId(Buffer.from(a)), auditKeyId(Buffer.from(b))]);
    expect(ring.current.id).toBe(auditKeyId(Buffer.from(b)));
    await expect(loadAuditKeys({ dataDir: dir, env: { ORGANISM_AUDIT_KEY: 'hunter2' } })).rejects.toThrow(
      /audit key 1 in environment variable ORGANISM_AUDIT_KEY is 7 characters; it needs at least 32/,
    );
    await expect(rotateAuditKeyFile(ring)).rejects.toThrow(/rotate there/);
  });

  it('a key file inside data_dir or the workspace is refused, by path or through a link', async () => {
    const dir = await temp();
    const dataDir = join(dir, 'data');
    const workspace = join(dir, 'ws');
    await mkdir(dataDir, { recursive: true });
    await mkdir(workspace, { recursive: true });
    await expect(
      loadAuditKeys({ keyFile: join(dataDir, 'audit.key'), dataDir, env: {}, create: true }),
    ).rejects.toThrow(/audit key file .*audit\.key is inside data_dir/);
    await expect(
      loadAuditKeys({
        keyFile: join(workspace, 'k', 'audit.key'),
        dataDir,
        workspace,
        env: {},
        create: true,
      }),
    ).rejects.toThrow(/is inside the workspace/);
    await symlink(dataDir, join(dir, 'looks-outside'));
    await expect(
      loadAuditKeys({ keyFile: join(dir, 'looks-outside', 'audit.key'), dataDir, env: {}, create: true }),
    ).rejects.toThrow(/is inside data_dir/);
    await expect(stat(join(dataDir, 'audit.key'))).rejects.toThrow(/ENOENT/); // nothing was created
  });

  it('organism.yaml naming a key file inside data_dir is refused at load, with the line', async () => {
    const dir = await temp();
    const file = join(dir, 'organism.yaml');
    const yaml = (keyFile: string) =>
      `organism:\n  name: keyed\n  data_dir: state\naudit:\n  key_file: ${keyFile}\nlisteners:\n  - { name: a, handler: ./a.ts, description: d }\n`;
    for (const inside of ['<data_dir>/audit.key', 'state/keys/audit.key', `${dir}/state/audit.key`]) {
      await writeFile(file, yaml(inside));
      await expect(loadConfig(file, { loadModules: false })).rejects.toThrow(
        /organism\.yaml:5:\d+: audit\.key_file: audit key file .* is inside data_dir/,
      );
    }
    await writeFile(file, yaml('~/.config/organism/other.key'));
    const { config } = await loadConfig(file, { loadModules: false });
    expect(config.audit.key_file).toMatch(/^\/.*\/\.config\/organism\/other\.key$/);
    expect(config.audit.key_env).toBe('ORGANISM_AUDIT_KEY');
  });
});
