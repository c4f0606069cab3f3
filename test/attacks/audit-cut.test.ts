/**
 * Attack: cut the audit trail unnoticed (issue 25, point 4). With the real daemon and the real
 * `organism tools call` / `organism audit` commands: a record cut from the log while the daemon
 * runs, then more calls; a record cut between `tools call` runs; the log deleted (daemon stopped
 * and running); the log replaced by another organism's (same key file) or by an older copy of
 * its own. Each is found: `audit --verify` exits 1 naming it, the writer records a threat, logs at
 * error and refuses tool calls until `organism audit --acknowledge`.
 */
import { cp, mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startDaemonProcess } from '../helpers/daemon.ts';
import { ADMIN_TOKEN, AUTH_YAML, call, LISTENERS, TOKENS_ENV, until } from '../server/helpers.ts';

const yaml = (name: string) => `organism:\n  name: ${name}\n${AUTH_YAML}listeners:
  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [calculate]
`;

interface Organism {
  dir: string;
  file: string;
  log: string;
  env: NodeJS.ProcessEnv;
}

/** An organism in a temp folder; `xdg` shared means one key file (and checkpoint folder) for all. */
async function organism(name: string, xdg: string): Promise<Organism> {
  const dir = await mkdtemp(join(tmpdir(), `organism-audit-cut-${name}-`));
  const file = join(dir, 'organism.yaml');
  await writeFile(file, yaml(name));
  const env = { ...TOKENS_ENV, XDG_CONFIG_HOME: xdg, ORGANISM_AUDIT_KEY: '' };
  return { dir, file, log: join(dir, '.organism', 'audit.jsonl'), env };
}

async function lines(path: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const calls = async (path: string) => (await lines(path)).filter((r) => r.type === 'call');

/** Drops the last `n` lines of the file (what `sed -i '$d'` does), keeping the rest byte for byte. */
async function cutLast(path: string, n = 1): Promise<void> {
  const text = await readFile(path, 'utf8');
  const kept = text.split('\n').filter((l) => l.length > 0);
  await writeFile(path, `${kept.slice(0, kept.length - n).join('\n')}\n`);
}

const verify = (o: Organism) => runCli(['audit', '--verify', '--config', o.file], o.env);
const toolsCall = (o: Organism, expression: string) =>
  runCli(
    [
      'tools',
      'call',
      'calculate',
      '--as',
      'toolbox',
      '--config',
      o.file,
      '--args',
      JSON.stringify({ expression }),
    ],
    o.env,
  );

describe('attack: cutting the audit trail', () => {
  it('a record cut while the daemon runs, then more calls: threat, error log, calls refused until acknowledged; verify exits 1', async () => {
    const xdg = await mkdtemp(join(tmpdir(), 'organism-audit-cut-xdg-'));
    const o = await organism('cut-live', xdg);
    const daemon = await startDaemonProcess(['--config', o.file], o.env);
    const use = (expression: string) =>
      call(daemon.url, '/api/v1/inject', {
        token: ADMIN_TOKEN,
        body: {
          to: 'toolbox',
          payload: `<use-tool><tool>calculate</tool><args>${JSON.stringify({ expression })}</args></use-tool>`,
        },
      });
    const waitCalls = (n: number) =>
      until(async () => ((await calls(o.log)).length >= n ? calls(o.log) : undefined));
    try {
      for (const e of ['1 + 1', '2 + 2', '3 + 3']) {
        expect((await use(e)).status).toBe(202);
        await waitCalls(['1 + 1', '2 + 2', '3 + 3'].indexOf(e) + 1);
      }
      expect((await verify(o)).code).toBe(0);
      // The attack: the last record (3 + 3) is cut, then the agent goes on calling.
      await cutLast(o.log);
      expect((await use('4 + 4')).status).toBe(202);
      await waitCalls(3);
      expect((await use('5 + 5')).status).toBe(202);
      const after = await waitCalls(4);
      const threat = (await lines(o.log)).find((r) => r.type === 'threat');
      expect(threat).toMatchObject({ kind: 'audit_log' });
      expect(String(threat?.reason)).toContain('shorter than');
      // Logged at error (pino level 50) on the daemon's log.
      expect(daemon.stdout()).toMatch(/"level":50[^\n]*AUDIT LOG CHANGED/);
      // The call that came before anything was written since the cut ran; its record follows the
      // threat record. The calls after it are refused, with a reason the agent can read.
      const all = await lines(o.log);
      expect(all.findIndex((r) => r.type === 'threat')).toBeLessThan(
        all.findIndex((r) => r.call_id === after[2]?.call_id),
      );
      expect(after.slice(2).map((r) => [r.outcome, r.code])).toEqual([
        ['ok', null],
        ['refused', 'AuditLogChanged'],
      ]);
      expect(String(after[3]?.message)).toContain('organism audit --acknowledge');
      const broken = await verify(o);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toContain('CHANGED');
      expect(broken.stderr).toContain('shorter than');

      // The operator's act: acknowledge. Calls run again; verify passes and still tells the story.
      const ack = await runCli(
        ['audit', '--acknowledge', '--reason', 'INC-7: record cut by a test', '--config', o.file],
        o.env,
      );
      expect(ack.stderr).toBe('');
      expect(ack.code).toBe(0);
      expect(ack.stdout).toContain('acknowledged');
      await until(async () => {
        expect((await use('6 + 6')).status).toBe(202);
        const last = (await calls(o.log)).at(-1);
        return last?.outcome === 'ok' ? true : undefined;
      });
      const changes = (await lines(o.log)).filter((r) => r.type === 'change');
      expect(changes.at(-1)).toMatchObject({ action: 'audit.acknowledged' });
      expect(String(changes.at(-1)?.detail)).toContain('INC-7');
      const ok = await verify(o);
      expect(ok.stderr).toBe('');
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('acknowledged');
    } finally {
      await daemon.stop();
    }
  }, 90_000);

  it('a record cut between `tools call` runs is found by the next one, which refuses; verify exits 1', async () => {
    const xdg = await mkdtemp(join(tmpdir(), 'organism-audit-cut-xdg-'));
    const o = await organism('cut-cli', xdg);
    expect((await toolsCall(o, '1 + 1')).code).toBe(0);
    expect((await toolsCall(o, '2 + 2')).code).toBe(0);
    expect((await verify(o)).code).toBe(0);
    await cutLast(o.log);
    // Cut at the end after a checkpoint, nothing run since: verify alone finds it.
    const cut = await verify(o);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(/cut from its end|shorter than/);
    const next = await toolsCall(o, '3 + 3');
    expect(next.code).toBe(2);
    expect(next.stdout + next.stderr).toContain('AuditLogChanged');
    const records = await lines(o.log);
    expect(records.filter((r) => r.type === 'threat')).toHaveLength(1);
    expect((await verify(o)).code).toBe(1);
  }, 60_000);

  it('a deleted log: verify exits 1; the daemon started on it records the loss and refuses; deleted under a running daemon too', async () => {
    const xdg = await mkdtemp(join(tmpdir(), 'organism-audit-cut-xdg-'));
    const o = await organism('deleted', xdg);
    expect((await toolsCall(o, '1 + 1')).code).toBe(0);
    await rm(o.log);
    const missing = await verify(o);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('MISSING');
    expect(missing.stderr).toContain(o.log);

    const daemon = await startDaemonProcess(['--config', o.file], o.env);
    try {
      const threat = await until(async () => (await lines(o.log)).find((r) => r.type === 'threat'));
      expect(String(threat.reason)).toContain('gone');
      expect(daemon.stdout()).toMatch(/"level":50[^\n]*AUDIT LOG CHANGED/);
      const use = () =>
        call(daemon.url, '/api/v1/inject', {
          token: ADMIN_TOKEN,
          body: {
            to: 'toolbox',
            payload: '<use-tool><tool>calculate</tool><args>{"expression": "1"}</args></use-tool>',
          },
        });
      expect((await use()).status).toBe(202);
      const refused = await until(async () => (await calls(o.log)).at(-1));
      expect(refused).toMatchObject({ outcome: 'refused', code: 'AuditLogChanged' });
      // Acknowledged; then deleted under the running daemon: found at its next write.
      expect((await runCli(['audit', '--acknowledge', '--config', o.file], o.env)).code).toBe(0);
      await until(async () => {
        await use();
        return (await calls(o.log)).at(-1)?.outcome === 'ok' ? true : undefined;
      });
      await rm(o.log);
      expect((await use()).status).toBe(202);
      const again = await until(async () => (await lines(o.log)).find((r) => r.type === 'threat'));
      expect(String(again.reason)).toContain('deleted');
      expect((await lines(o.log))[0]).toMatchObject({ type: 'log', organism: 'deleted' });
      expect((await verify(o)).code).toBe(1);
    } finally {
      await daemon.stop();
    }
  }, 90_000);

  it("another organism's log (same key file) or an older copy of its own, put in its place: verify exits 1 naming it", async () => {
    const xdg = await mkdtemp(join(tmpdir(), 'organism-audit-cut-xdg-'));
    const mine = await organism('mine', xdg);
    const other = await organism('other', xdg);
    expect((await toolsCall(mine, '1 + 1')).code).toBe(0);
    const older = join(mine.dir, 'older.jsonl');
    await cp(mine.log, older);
    expect((await toolsCall(mine, '2 + 2')).code).toBe(0);
    for (const e of ['1', '2', '3']) expect((await toolsCall(other, e)).code).toBe(0);
    // Today both verify: one key file, no identity. Now the other's log is not this organism's.
    expect((await verify(other)).code).toBe(0);
    await mkdir(join(mine.dir, '.organism'), { recursive: true });
    await cp(other.log, mine.log);
    const replaced = await verify(mine);
    expect(replaced.code).toBe(1);
    expect(replaced.stderr).toContain('REPLACED');
    expect(replaced.stderr).toContain("organism 'other'");
    // An older copy of its own log: one record short of the last checkpoint.
    await cp(older, mine.log);
    const rolledBack = await verify(mine);
    expect(rolledBack.code).toBe(1);
    expect(rolledBack.stderr).toMatch(/cut from its end|older copy/);
    // A log truncated to nothing while its checkpoints remain.
    await truncate(mine.log, 0);
    expect((await verify(mine)).code).toBe(1);
  }, 60_000);
});
