/**
 * The real daemon and `organism tools call` seal one audit log with the key the daemon created
 * outside data_dir at first start; `organism audit --verify` accepts it (exit 0, naming the key),
 * and rejects with exit 1 a copy whose send_email records were removed and the chain re-hashed
 * without the key.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chainLine } from '../../src/audit/chain.ts';
import type { AuditEntry } from '../../src/audit/record.ts';
import { runCli, startDaemonProcess } from '../helpers/daemon.ts';
import { ADMIN_TOKEN, AUTH_YAML, call, LISTENERS, TOKENS_ENV, until } from '../server/helpers.ts';

const YAML = `organism:\n  name: keyed-audit\n${AUTH_YAML}listeners:
  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [calculate, send_email]
`;

/** Drops the send_email lines and re-chains from the first of them on with `seal`. */
function forge(lines: string[], seal: (entry: AuditEntry, prev: string | undefined) => string): string {
  const from = lines.findIndex((line) => JSON.parse(line).tool === 'send_email');
  const out = lines.slice(0, from);
  for (const line of lines.slice(from)) {
    const { prev: _p, hash: _h, key_id: _k, ...entry } = JSON.parse(line);
    if (entry.tool !== 'send_email') out.push(seal(entry as AuditEntry, out.at(-1)));
  }
  return `${out.join('\n')}\n`;
}

describe('the daemon with an audit key', () => {
  it('writes a keyed log that verify accepts, and a copy re-hashed without the key is rejected', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-keyed-daemon-'));
    const file = join(dir, 'organism.yaml');
    await writeFile(file, YAML);
    // No key configured: the daemon makes one under $XDG_CONFIG_HOME, outside data_dir.
    const env = { ...TOKENS_ENV, XDG_CONFIG_HOME: join(dir, 'xdg'), ORGANISM_AUDIT_KEY: '' };
    const keyFile = join(dir, 'xdg', 'organism', 'audit.key');
    const auditFile = join(dir, '.organism', 'audit.jsonl');
    const daemon = await startDaemonProcess(['--config', file], env);
    const use = (tool: string, args: object) =>
      call(daemon.url, '/api/v1/inject', {
        token: ADMIN_TOKEN,
        body: {
          to: 'toolbox',
          payload: `<use-tool><tool>${tool}</tool><args>${JSON.stringify(args)}</args></use-tool>`,
        },
      });
    // Every line, once `n` call records are there (the log's first line is its identity record).
    const records = async (n: number) =>
      until(async () => {
        const text = await readFile(auditFile, 'utf8').catch(() => '');
        const lines = text.split('\n').filter((l) => l.length > 0);
        return lines.filter((l) => JSON.parse(l).type === 'call').length >= n ? lines : undefined;
      });
    try {
      const key = (await readFile(keyFile, 'utf8')).trimEnd().split('\n').at(-1) as string;
      const keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      expect(daemon.stdout()).toContain(`created the audit key file ${keyFile}`);
      expect(daemon.stdout()).toContain(`"key_id":"${keyId}"`);

      expect((await use('calculate', { expression: '1 + 1' })).status).toBe(202);
      await records(1);
      expect((await use('send_email', { to: 'boss@example.com', subject: 's', body: 'b' })).status).toBe(202);
      await records(2);
      // The CLI runs the tool next to the daemon (--local: in its own process, not through the
      // daemon) and appends to the same chain, with the same key.
      const cli = await runCli(
        [
          'tools',
          'call',
          'send_email',
          '--as',
          'toolbox',
          '--config',
          file,
          '--local',
          '--args',
          '{"to": "x@example.com"}',
        ],
        env,
      );
      expect(cli.code).not.toBe(0);
      await records(3);
      expect((await use('calculate', { expression: '2 + 2' })).status).toBe(202);
      const lines = await records(4);
      expect(lines.map((l) => [JSON.parse(l).tool ?? JSON.parse(l).type, JSON.parse(l).key_id])).toEqual([
        ['log', keyId],
        ['calculate', keyId],
        ['send_email', keyId],
        ['send_email', keyId],
        ['calculate', keyId],
      ]);

      const ok = await runCli(['audit', '--verify', '--config', file], env);
      expect(ok.stderr).toBe('');
      expect(ok.stdout).toContain(
        `ok: ${auditFile}: 5 records, hash chain intact: 5 sealed with HMAC-SHA256 under key ${keyId} (from ${keyFile})`,
      );
      expect(ok.stdout).toContain(`last record: 5, hash ${JSON.parse(lines[4] as string).hash}`);
      expect(ok.stdout).toContain(
        `log id ${JSON.parse(lines[0] as string).log_id} of organism 'keyed-audit'`,
      );
      expect(ok.code).toBe(0);

      // The attack: send_email records removed, the chain re-hashed with plain SHA-256.
      const copy = join(dir, 'tampered.jsonl');
      await writeFile(
        copy,
        forge(lines, (e, p) => chainLine(e, p)),
      );
      const plain = await runCli(['audit', '--verify', '--config', file, '--file', copy], env);
      expect(plain.code).toBe(1);
      expect(plain.stdout).toBe('');
      expect(plain.stderr).toContain(
        `${copy}:3: record 3 has no key_id after records sealed with key ${keyId}: it was rewritten by someone without the key; the 2 records before it verify`,
      );
      // The same with a guessed key posing as the real one.
      const guessed = { id: keyId, secret: Buffer.from('0'.repeat(64)) };
      await writeFile(
        copy,
        forge(lines, (e, p) => chainLine(e, p, guessed)),
      );
      const guess = await runCli(['audit', '--verify', '--config', file, '--file', copy], env);
      expect(guess.code).toBe(1);
      expect(guess.stderr).toContain(
        `${copy}:3: record 3 does not match its own hash (HMAC-SHA256 with key ${keyId})`,
      );
      // The whole file re-hashed: it links, but the CLI does not call it intact.
      const whole = lines.filter((l) => JSON.parse(l).tool !== 'send_email');
      const rehashed: string[] = [];
      for (const line of whole) {
        const { prev: _p, hash: _h, key_id: _k, ...entry } = JSON.parse(line);
        rehashed.push(chainLine(entry as AuditEntry, rehashed.at(-1)));
      }
      await writeFile(copy, `${rehashed.join('\n')}\n`);
      const unkeyed = await runCli(['audit', '--verify', '--config', file, '--file', copy], env);
      expect(unkeyed.code).toBe(1);
      expect(unkeyed.stdout).not.toContain('intact');
      expect(unkeyed.stderr).toContain(
        `UNKEYED: ${copy}: records 1-3 of 3 link by plain SHA-256 but carry no audit key`,
      );
      // The key is one of the daemon's known secrets: even a part of it in an argument is redacted.
      expect((await use('calculate', { expression: `${key.slice(0, 12)} + 1` })).status).toBe(202);
      const last = JSON.parse((await records(5)).at(-1) as string);
      expect(last.input.expression).toBe('[REDACTED] + 1');
      expect(await readFile(auditFile, 'utf8')).not.toContain(key.slice(0, 12));
      // And the real log still verifies: the forgeries were copies.
      expect((await runCli(['audit', '--verify', '--config', file], env)).code).toBe(0);

      // Another key place takes a restart: a reload says so and keeps sealing with the key it has.
      await writeFile(
        file,
        YAML.replace('listeners:', `audit:\n  key_file: ${join(dir, 'other.key')}\nlisteners:`),
      );
      const reload = await call(daemon.url, '/api/v1/organism/reload', {
        token: ADMIN_TOKEN,
        method: 'POST',
      });
      expect(reload.json.restart_required).toEqual(['audit.key_file']);
      expect((await use('calculate', { expression: '3 + 3' })).status).toBe(202);
      expect(JSON.parse((await records(6)).at(-1) as string).key_id).toBe(keyId);
    } finally {
      await daemon.stop();
    }
  }, 60_000);
});
