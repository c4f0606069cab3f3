/**
 * The local API token (issue 25, point 3) with the real daemon and CLI: made once and kept private,
 * never in a log line, found by the CLI on the machine without setup and sent to the daemon of its
 * data dir only, a signed-in dashboard link from `organism dashboard` and on a terminal.
 */
import { spawn } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localToken, ORGANISM_BIN, REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  chainYaml,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';

/** No ORGANISM_URL or token from the developer's shell leaks into these runs. */
const CLEAN = { ORGANISM_URL: '', ORGANISM_TOKEN: '' };
const HEX64 = /^[0-9a-f]{64}$/;

describe('the token file', () => {
  it('is made at the first start (0600, data dir 0700), kept across restarts, and never logged', async () => {
    const { dir, file } = await organismDir(`organism:\n  name: kept\nlisteners:\n${chainYaml()}`);
    const dataDir = join(dir, '.organism');
    const first = await startOn(file);
    const token = await localToken(dataDir);
    expect(token).toMatch(HEX64);
    expect(first.token).toBe(token);
    expect((await stat(join(dataDir, 'api-token'))).mode & 0o777).toBe(0o600);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    // The log names the file and the command that prints a signed-in link, never the token. The
    // start is seen at the listening line; the dashboard's line is the write after it, and may
    // reach the pipe a moment later.
    expect(first.stdout()).toContain(`"token_file":"${join(dataDir, 'api-token')}"`);
    await until(() => first.stdout().includes("'organism dashboard' prints a signed-in link"));
    expect(first.stdout()).not.toContain('#token=');
    expect(first.stdout() + first.stderr()).not.toContain(token);
    await first.stop();

    const second = await startOn(file);
    try {
      expect(await localToken(dataDir)).toBe(token);
      expect((await call(second.url, '/api/v1/session', { token })).json).toMatchObject({
        name: 'local',
        role: 'admin',
      });
      expect((await call(second.url, '/api/v1/session', { token: null })).status).toBe(401);
    } finally {
      await second.stop();
    }
  }, 60_000);

  it('one others could read is replaced, with a warning; a link is not followed; an open data dir is closed', async () => {
    const { dir, file } = await organismDir(`organism:\n  name: mended\nlisteners:\n${chainYaml()}`);
    const dataDir = join(dir, '.organism');
    await mkdir(dataDir, { mode: 0o755 });
    await chmod(dataDir, 0o755);
    const leaked = 'a'.repeat(64);
    await writeFile(join(dataDir, 'api-token'), `${leaked}\n`, { mode: 0o644 });
    const daemon = await startOn(file);
    try {
      const token = await localToken(dataDir);
      expect(token).toMatch(HEX64);
      expect(token).not.toBe(leaked);
      expect(daemon.stdout()).toMatch(
        /api-token could be read by others \(mode 644\): replaced with a new token/,
      );
      expect(daemon.stdout()).toMatch(/was open to others \(mode 755\): now 700/);
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
      expect((await call(daemon.url, '/api/v1/session', { token: leaked })).status).toBe(401);
    } finally {
      await daemon.stop();
    }

    // A link planted in its place: the daemon neither reads its target's token nor writes through it.
    const elsewhere = join(dir, 'elsewhere-token');
    const planted = 'b'.repeat(64);
    await writeFile(elsewhere, `${planted}\n`, { mode: 0o600 });
    const { rm } = await import('node:fs/promises');
    await rm(join(dataDir, 'api-token'));
    await symlink(elsewhere, join(dataDir, 'api-token'));
    const again = await startOn(file);
    try {
      expect((await lstat(join(dataDir, 'api-token'))).isSymbolicLink()).toBe(false);
      expect(await localToken(dataDir)).not.toBe(planted);
      expect(await readFile(elsewhere, 'utf8')).toBe(`${planted}\n`);
      expect(again.stdout()).toContain('api-token is a symbolic link: replaced with a new token');
      expect((await call(again.url, '/api/v1/session', { token: planted })).status).toBe(401);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('a token in organism.yaml named local is refused at start, with its place', async () => {
    const { file } = await organismDir(
      `organism:\n  name: clash\nauth:\n  tokens:\n    - { name: local, role: viewer, token_env: TEST_VIEWER_TOKEN }\nlisteners:\n${chainYaml()}`,
    );
    // organism.yaml's schema refuses it, with its place (the authenticator refuses it too, in process).
    await expect(startOn(file, TOKENS_ENV)).rejects.toThrow(/:5:\d+: auth\.tokens\[0\]\.name: .*got 'local'/);
  }, 30_000);
});

describe('the CLI on the daemon machine', () => {
  it('uses the local token (admin) with auth.tokens configured too, and names it in status', async () => {
    const { file } = await organismDir(`organism:\n  name: both\n${AUTH_YAML}listeners:\n${chainYaml()}`);
    const daemon = await startOn(file, TOKENS_ENV);
    try {
      const reloaded = await runCli(['reload', '--config', file], CLEAN);
      expect(reloaded.stderr).toBe('');
      expect(reloaded.stdout).toContain('reloaded (by local)');
      const status = await runCli(['status', '--config', file], CLEAN);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(
        'auth: root (admin), ops (operator), watcher (viewer), the local token (admin, <data_dir>/api-token)',
      );
      // ORGANISM_TOKEN, when set, is what it sends instead.
      const asViewer = await runCli(['reload', '--config', file], { ...CLEAN, ORGANISM_TOKEN: VIEWER_TOKEN });
      expect(asViewer.code).toBe(1);
      expect(asViewer.stderr).toContain('403');
      expect((await call(daemon.url, '/api/v1/organism', { token: ADMIN_TOKEN })).json.auth).toMatchObject({
        enabled: true,
        local_token: true,
      });
    } finally {
      await daemon.stop();
    }
  }, 60_000);

  it('sends it to the daemon of its data dir only, never to another address', async () => {
    const { file } = await organismDir(`organism:\n  name: own\nlisteners:\n${chainYaml()}`);
    const daemon = await startOn(file);
    const seen: IncomingHttpHeaders[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'auth.required', message: 'who are you' } }));
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      const byEnv = await runCli(['status', '--config', file], { ...CLEAN, ORGANISM_URL: otherUrl });
      const byFlag = await runCli(['send', '--config', file, '--url', otherUrl, '<greeting/>'], CLEAN);
      expect(byEnv.code).toBe(1);
      expect(byFlag.code).toBe(1);
      expect(byEnv.stderr).toContain('give --config of its organism.yaml and the CLI finds the local token');
      expect(seen.length).toBeGreaterThanOrEqual(2);
      for (const headers of seen) expect(headers.authorization).toBeUndefined();
      // The same flag naming the daemon itself gets the token.
      const own = await runCli(['status', '--config', file, '--url', daemon.url], CLEAN);
      expect(own.code, own.stderr).toBe(0);
    } finally {
      other.close();
      await daemon.stop();
    }
  }, 60_000);
});

describe('the signed-in dashboard link', () => {
  it('organism dashboard prints it; its token signs in as local', async () => {
    const { dir, file } = await organismDir(`organism:\n  name: linked\nlisteners:\n${chainYaml()}`);
    const daemon = await startOn(file);
    try {
      const printed = await runCli(['dashboard', '--config', file], CLEAN);
      expect(printed.stderr).toBe('');
      expect(printed.code).toBe(0);
      const token = await localToken(join(dir, '.organism'));
      expect(printed.stdout.trim()).toBe(`${daemon.url}/#token=${token}`);
      const wrong = await runCli(['dashboard', '--config', file], {
        ...CLEAN,
        ORGANISM_TOKEN: 'x'.repeat(20),
      });
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toBe('');
      expect(wrong.stderr).toContain('401');
    } finally {
      await daemon.stop();
    }
    const off = await organismDir(
      `organism:\n  name: dark\nserver:\n  dashboard: false\nlisteners:\n${chainYaml()}`,
    );
    const dark = await startOn(off.file);
    try {
      const refused = await runCli(['dashboard', '--config', off.file], CLEAN);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('serves no dashboard (server.dashboard: false)');
      expect(refused.stdout).toBe('');
    } finally {
      await dark.stop();
    }
  }, 60_000);

  it('the daemon prints it on a terminal, where a person reads it, and not in a piped log', async () => {
    const { dir, file } = await organismDir(`organism:\n  name: tty\nlisteners:\n${chainYaml()}`);
    // script(1) gives the daemon a pseudo-terminal as its stdout.
    const child = spawn(
      'script',
      ['-qfec', `${process.execPath} ${ORGANISM_BIN} run --port 0 --config ${file}`, '/dev/null'],
      { cwd: REPO_ROOT, env: { ...process.env, ...CLEAN }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    try {
      const link = await until(async () => /Dashboard, signed in[^:]*: (\S+)/.exec(out)?.[1], 30_000);
      const token = await localToken(join(dir, '.organism'));
      expect(link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/#token=${token}$`));
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    // Piped (startDaemonProcess), there is no link: only the command that prints it.
    const piped = await startDaemonProcess(['--config', file]);
    try {
      expect(piped.stdout()).not.toContain('#token=');
    } finally {
      await piped.stop();
    }
  }, 60_000);
});
