/**
 * The CLI against a real daemon: how it finds the daemon (--url, ORGANISM_URL, the address the
 * daemon wrote into its data_dir, organism.yaml), and the operator commands pause, resume, kill and
 * reload, each checked through the API.
 */
import { spawn } from 'node:child_process';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { runCli } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  chainYaml,
  LISTENERS,
  NAPPER_YAML,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';

/** No ORGANISM_URL or token from the developer's shell leaks into these runs. */
const CLEAN = { ORGANISM_URL: '', ORGANISM_TOKEN: '' };

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** A pid no process has any more. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('the CLI finds the daemon', () => {
  let alpha: { dir: string; file: string };
  let beta: { dir: string; file: string };
  let a: DaemonProcess;
  let b: DaemonProcess;

  beforeAll(async () => {
    alpha = await organismDir(`organism:\n  name: alpha\nlisteners:\n${chainYaml()}`);
    beta = await organismDir(`organism:\n  name: beta\nlisteners:\n${chainYaml()}`);
    // startOn runs `organism run --port 0`: only the daemon knows its port.
    [a, b] = await Promise.all([startOn(alpha.file), startOn(beta.file)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('through the address the daemon wrote into its data_dir, after run --port 0', async () => {
    const written = JSON.parse(await readFile(join(alpha.dir, '.organism', 'daemon.json'), 'utf8'));
    expect(written).toMatchObject({ url: a.url, pid: a.child.pid });

    const { code, stdout, stderr } = await runCli(['status', '--config', alpha.file], CLEAN);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`organism alpha 0.1.0 at ${a.url}`);
  });

  it('ORGANISM_URL wins over the data_dir file, --url over both', async () => {
    // alpha's local token is for alpha's daemon only: beta's comes from the environment.
    const byEnv = await runCli(['status', '--config', alpha.file], {
      ...CLEAN,
      ORGANISM_URL: b.url,
      ORGANISM_TOKEN: b.token,
    });
    expect(byEnv.code).toBe(0);
    expect(byEnv.stdout).toContain(`organism beta 0.1.0 at ${b.url}`);

    const byFlag = await runCli(['status', '--config', alpha.file, '--url', a.url], {
      ...CLEAN,
      ORGANISM_URL: b.url,
    });
    expect(byFlag.code).toBe(0);
    expect(byFlag.stdout).toContain(`organism alpha 0.1.0 at ${a.url}`);
  });

  it("ignores a file left by a daemon that is gone, and falls back to organism.yaml's server section", async () => {
    const gone = await organismDir(`organism:\n  name: gone\nserver:\n  port: 1\nlisteners:\n${chainYaml()}`);
    const dataDir = join(gone.dir, '.organism');
    await mkdir(dataDir);
    // The address of a live daemon, but written by a process that has exited.
    await writeFile(join(dataDir, 'daemon.json'), JSON.stringify({ url: b.url, pid: await deadPid() }));
    const { code, stdout, stderr } = await runCli(['status', '--config', gone.file], CLEAN);
    expect(stdout).not.toContain('organism beta');
    expect(code).toBe(1);
    expect(stderr).toContain('cannot reach the daemon at http://127.0.0.1:1');
  });

  it('the daemon removes the file at a clean shutdown', async () => {
    const brief = await organismDir(`organism:\n  name: brief\nlisteners:\n${chainYaml()}`);
    const daemon = await startOn(brief.file);
    const file = join(brief.dir, '.organism', 'daemon.json');
    expect(await exists(file)).toBe(true);
    expect(await daemon.stop('SIGTERM')).toBe(0);
    expect(await exists(file)).toBe(false);
  });
});

describe('.env beside organism.yaml', () => {
  const TOKEN_FROM_FILE = 'dotenv-Kq7wR3tY9pLm2Xv5';
  const TOKEN_FROM_PROCESS = 'process-Zb4nH8jD1sFg6Wc0';
  const yaml = `organism:\n  name: dotenv\nauth:\n  tokens:\n    - { name: me, role: admin, token_env: MY_TOKEN }\nlisteners:\n${chainYaml()}`;

  it('gives auth token_env its value, and the process environment wins over it', async () => {
    const { dir, file } = await organismDir(yaml);
    await writeFile(join(dir, '.env'), `# local secrets\nMY_TOKEN=${TOKEN_FROM_FILE}\n`);

    const fromFile = await startOn(file, { MY_TOKEN: undefined });
    try {
      expect((await call(fromFile.url, '/api/v1/organism', { token: TOKEN_FROM_FILE })).status).toBe(200);
      expect((await call(fromFile.url, '/api/v1/organism')).status).toBe(401);
      // A reload reads the tokens again, from the same merged environment.
      const reload = await call(fromFile.url, '/api/v1/organism/reload', {
        token: TOKEN_FROM_FILE,
        body: {},
      });
      expect(reload.text).toContain('"status":"reloaded"');
    } finally {
      await fromFile.stop();
    }

    const fromProcess = await startOn(file, { MY_TOKEN: TOKEN_FROM_PROCESS });
    try {
      expect((await call(fromProcess.url, '/api/v1/organism', { token: TOKEN_FROM_PROCESS })).status).toBe(
        200,
      );
      expect((await call(fromProcess.url, '/api/v1/organism', { token: TOKEN_FROM_FILE })).status).toBe(401);
      // A reload reads the .env again and keeps the process's value on top.
      expect(
        (await call(fromProcess.url, '/api/v1/organism/reload', { token: TOKEN_FROM_PROCESS, body: {} }))
          .status,
      ).toBe(200);
      expect((await call(fromProcess.url, '/api/v1/organism', { token: TOKEN_FROM_PROCESS })).status).toBe(
        200,
      );
    } finally {
      await fromProcess.stop();
    }
  });
});

describe('.env and the tools’ *_env keys', () => {
  const yaml = `organism:\n  name: dotenv-tools\nsmtp:\n  host: 127.0.0.1\n  port: 2525\n  user: robot\n  password_env: MAIL_PASS\n  from: robot@example.org\nweb_search:\n  provider: brave\n  api_key_env: SEARCH_KEY\nlibrarian:\n  backend: exist\n  url: http://127.0.0.1:1/exist/rest\n  user: admin\n  password_env: LIB_PASS\nlisteners:\n  - name: toolbox\n    handler: ${LISTENERS}toolbox.ts\n    tools: [send_email, web_search, librarian_list]\n`;
  const unavailable = (text: string, tool: string) =>
    text
      .split('\n')
      .find((line) => line.startsWith(tool))
      ?.includes('UNAVAILABLE');

  it('smtp.password_env, web_search.api_key_env and librarian.password_env are read from the .env, by the CLI and the daemon', async () => {
    const { dir, file } = await organismDir(yaml);
    const unset = { ...CLEAN, MAIL_PASS: undefined, SEARCH_KEY: undefined, LIB_PASS: undefined };
    const before = await runCli(['tools', 'list', '--as', 'toolbox', '--config', file], unset);
    expect(before.code).toBe(0);
    expect(unavailable(before.stdout, 'send_email')).toBe(true);
    expect(unavailable(before.stdout, 'web_search')).toBe(true);
    expect(unavailable(before.stdout, 'librarian_list')).toBe(true);

    await writeFile(
      join(dir, '.env'),
      'MAIL_PASS=mail-secret-1\nSEARCH_KEY=search-secret-2\nLIB_PASS=lib-secret-3\n',
    );
    const after = await runCli(['tools', 'list', '--as', 'toolbox', '--config', file], unset);
    expect(after.code).toBe(0);
    expect(unavailable(after.stdout, 'send_email')).toBe(false);
    expect(unavailable(after.stdout, 'web_search')).toBe(false);
    expect(unavailable(after.stdout, 'librarian_list')).toBe(false);
    expect(after.stdout + after.stderr).not.toContain('secret');

    const daemon = await startOn(file, unset);
    try {
      const tools = await call(daemon.url, '/api/v1/tools?as=toolbox');
      const byName = Object.fromEntries(tools.json.tools.map((t: any) => [t.tool, t]));
      expect(byName.send_email.available).toBe(true);
      expect(byName.web_search.available).toBe(true);
      expect(byName.librarian_list.available).toBe(true);
    } finally {
      await daemon.stop();
    }
  });
});

describe('.env and audit.key_env', () => {
  it('the daemon seals with the key from the .env, and audit --verify finds it there too', async () => {
    const { dir, file } = await organismDir(
      `organism:\n  name: dotenv-audit\naudit:\n  key_env: MY_AUDIT_KEY\nlisteners:\n${chainYaml()}`,
    );
    await writeFile(join(dir, '.env'), `MY_AUDIT_KEY=${'7f'.repeat(32)}\n`);
    const unset = { ...CLEAN, MY_AUDIT_KEY: undefined };
    const daemon = await startOn(file, unset);
    try {
      // An operator action is an audit record.
      expect((await runCli(['pause', 'printer', '--config', file], unset)).code).toBe(0);
    } finally {
      await daemon.stop();
    }
    const verify = await runCli(['audit', '--verify', '--config', file], unset);
    expect(verify.stderr).toBe('');
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain('environment variable MY_AUDIT_KEY');
    expect(verify.stdout).not.toContain('7f7f');
  });
});

describe('organism pause | resume | kill | reload', () => {
  let file: string;
  let daemon: DaemonProcess;
  const admin = { ...TOKENS_ENV, ...CLEAN, ORGANISM_TOKEN: ADMIN_TOKEN };

  beforeAll(async () => {
    ({ file } = await organismDir(
      `organism:\n  name: operated\n${AUTH_YAML}listeners:\n${chainYaml()}${NAPPER_YAML}`,
    ));
    daemon = await startOn(file, TOKENS_ENV);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  const listener = async (name: string) =>
    (await call(daemon.url, `/api/v1/listeners/${name}`, { token: ADMIN_TOKEN })).json;

  it('pause and resume a listener, found through the data_dir file', async () => {
    const paused = await runCli(['pause', 'shouter', '--config', file], admin);
    expect(paused.stderr).toBe('');
    expect(paused.code).toBe(0);
    expect(paused.stdout).toMatch(/^shouter: paused \(queue 0\/\d+, 0 handling now\)/);
    expect((await listener('shouter')).state.paused).toBe(true);

    const resumed = await runCli(['resume', 'shouter', '--config', file], admin);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/^shouter: running/);
    expect((await listener('shouter')).state.paused).toBe(false);
  });

  it('says what the API says for an unknown listener, with a did-you-mean, and exits 1', async () => {
    const { code, stderr } = await runCli(['pause', 'shoutr', '--config', file], admin);
    expect(code).toBe(1);
    expect(stderr).toContain("404 listener.not_found: no listener named 'shoutr'");
    expect(stderr).toContain("did you mean 'shouter'?");
  });

  it('exits 2 on a usage mistake, 0 with --help, 1 when the token may not do it', async () => {
    const missing = await runCli(['pause', '--config', file], admin);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('give the listener');
    expect(missing.stderr).toContain('usage: organism pause LISTENER');
    expect((await runCli(['kill', 'a', 'b', '--config', file], admin)).code).toBe(2);
    expect((await runCli(['reload', 'now', '--config', file], admin)).code).toBe(2);

    const help = await runCli(['resume', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: organism resume LISTENER');
    expect(help.stdout).toContain('--token-env NAME');

    const viewer = await runCli(['pause', 'shouter', '--config', file], {
      ...admin,
      ORGANISM_TOKEN: VIEWER_TOKEN,
    });
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toContain('403');
    expect((await listener('shouter')).state.paused).toBe(false);
  });

  it('kill stops a running thread; status counts it as running until then', async () => {
    const sent = await call(daemon.url, '/api/v1/inject', {
      token: ADMIN_TOKEN,
      body: { to: 'napper', payload: '<nap><ms>30000</ms></nap>' },
    });
    expect(sent.status).toBe(202);
    const thread: string = sent.json.thread;
    await until(async () => (await listener('napper')).state.active === 1 || undefined);

    const busy = await runCli(['status', '--config', file], admin);
    expect(busy.code).toBe(0);
    expect(busy.stdout).toMatch(/threads: 1 running, \d+ known to the bus/);

    const killed = await runCli(['kill', thread, '--config', file], admin);
    expect(killed.stderr).toBe('');
    expect(killed.code).toBe(0);
    expect(killed.stdout).toContain(
      `thread ${thread}: stopped; 0 queued messages dropped, 1 running handler aborted`,
    );
    const view = await call(daemon.url, `/api/v1/threads/${thread}`, { token: ADMIN_TOKEN });
    expect(view.json.status).toBe('stopped');

    const idle = await runCli(['status', '--config', file], admin);
    expect(idle.stdout).toMatch(/threads: 0 running, /);

    const unknown = await runCli(['kill', 'no-such-thread', '--config', file], admin);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('404 thread.not_found');
  });

  it('reload applies an edited organism.yaml, and lists every problem of a broken one (exit 1)', async () => {
    const original = await readFile(file, 'utf8');
    expect(original).toContain(NAPPER_YAML);
    await writeFile(file, original.replace(NAPPER_YAML, '').replace('name: operated', 'name: renamed'));
    const reloaded = await runCli(['reload', '--config', file], admin);
    expect(reloaded.stderr).toBe('');
    expect(reloaded.code).toBe(0);
    expect(reloaded.stdout).toContain('reloaded (by root)');
    expect(reloaded.stdout).toContain('  removed: napper');
    expect(reloaded.stdout).toContain('  needs a restart: organism.name');
    expect((await call(daemon.url, '/api/v1/listeners/napper', { token: ADMIN_TOKEN })).status).toBe(404);
    const info = await call(daemon.url, '/api/v1/organism', { token: ADMIN_TOKEN });
    expect(info.json.reloads.applied).toBe(1);

    await writeFile(file, original.replace('peers: [shouter]', 'peer: [shouter]'));
    const refused = await runCli(['reload', '--config', file], admin);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'organism reload: 422 config.invalid: refused, 1 problem; nothing was changed',
    );
    expect(refused.stderr).toMatch(/organism\.yaml:\d+:\d+: .*did you mean 'peers'/);
    const after = await call(daemon.url, '/api/v1/organism', { token: ADMIN_TOKEN });
    expect(after.json.reloads).toMatchObject({ applied: 1, refused: 1 });
  });
});
