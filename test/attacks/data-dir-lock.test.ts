/**
 * One daemon per data dir, with locks the OS releases (issue 25, point 6), against the real daemon
 * (bin/organism.js run): a second `organism run` on the same data dir is refused at once with one
 * line and leaves the first (and its daemon.json) alone; lock files left by a dead process (a
 * container's daemon that was pid 1) block neither the start nor the tools; and journal segments
 * named after a pid that some unrelated live process has now are recovered, not skipped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type DaemonProcess, LISTENING, ORGANISM_BIN, REPO_ROOT, runCli } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  LISTENERS,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
} from '../server/helpers.ts';

const SUPPORT = fileURLToPath(new URL('../e2e/durability-support/', import.meta.url));

const running: DaemonProcess[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const daemon of running.splice(0)) await daemon.stop('SIGKILL');
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function start(file: string, env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
  const daemon = await startOn(file, { ...TOKENS_ENV, ...env });
  running.push(daemon);
  return daemon;
}

/**
 * `organism run` once more, as a person would type it: resolves when it exits, or, if it starts
 * listening instead (the attack succeeded), stops it and says so.
 */
function runAgain(
  file: string,
): Promise<{ code: number | null; stdout: string; stderr: string; listened: boolean; ms: number }> {
  const began = Date.now();
  const child = spawn(process.execPath, [ORGANISM_BIN, 'run', '--port', '0', '--config', file], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...TOKENS_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  let listened = false;
  const look = () => {
    if (!listened && LISTENING.test(stdout + stderr)) {
      listened = true;
      child.kill('SIGTERM');
    }
  };
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    look();
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    look();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, listened, ms: Date.now() - began });
    }),
  );
}

/** A process that listens on a Unix socket at `path` and is then killed -9: the socket file stays. */
async function deadSocket(path: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.stdout.write('up\\n'))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

const toolboxYaml = (name: string) => `organism:
  name: ${name}
  log_level: info
${AUTH_YAML}listeners:
  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [key_value_set, key_value_get, write_file]
  - name: recorder
    handler: ${SUPPORT}recorder.ts
    queue_length: 100
`;

/** One tool call through the toolbox listener, as `organism send --wait` makes it. */
async function useTool(url: string, tool: string, args: unknown): Promise<{ status: string; text: string }> {
  const payload = `<use-tool><tool>${tool}</tool><args>${JSON.stringify(args).replaceAll('&', '&amp;').replaceAll('<', '&lt;')}</args></use-tool>`;
  const sent = await runCli(['send', '--url', url, '--to', 'toolbox', payload, '--wait'], {
    ORGANISM_TOKEN: ADMIN_TOKEN,
  });
  const answer = sent.stdout.split('\n').find((line) => line.startsWith('toolbox -> api')) ?? '';
  const status = /<status>([^<]*)<\/status>/.exec(answer)?.[1];
  if (status === undefined)
    throw new Error(`no tool answer (exit ${sent.code}):\n${sent.stdout}${sent.stderr}`);
  return { status, text: answer };
}

describe('one daemon per data dir', () => {
  it('refuses a second `organism run` on the same data dir at once, in one line, and leaves the first alone', async () => {
    const { dir, file } = await organismDir(toolboxYaml('lock-twice'));
    const first = await start(file);
    const addressFile = join(dir, '.organism', 'daemon.json');
    const before = await readFile(addressFile, 'utf8');
    expect(JSON.parse(before)).toMatchObject({ pid: first.child.pid, url: first.url });

    const listing = async () => (await readdir(join(dir, '.organism'), { recursive: true })).sort();
    const filesBefore = await listing();
    const second = await runAgain(file);
    console.log(`second organism run: exit ${second.code} after ${second.ms} ms: ${second.stderr.trim()}`);
    expect(second.listened, `the second daemon started:\n${second.stdout}${second.stderr}`).toBe(false);
    expect(second.code).not.toBe(0);
    // Nothing started: no listener, tool or journal of its own (a warning about fds its launcher left
    // open may come first: the test runner leaves one).
    expect(second.stdout).not.toMatch(/listening on|organism running|journal|thread history/);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`already running, pid ${first.child.pid} at ${first.url}(\\s|$)`));
    // At once: before loading the tools and listeners (a start takes seconds here).
    expect(second.ms).toBeLessThan(10_000);

    // The first is unharmed: its address file (and every other file, none added), its API, its tools.
    expect(await readFile(addressFile, 'utf8')).toBe(before);
    expect(await listing()).toEqual(filesBefore);
    expect((await call(first.url, '/healthz')).status).toBe(200);
    expect((await useTool(first.url, 'key_value_set', { key: 'k', value: 'still mine' })).status).toBe('ok');

    // And once it stops, the same data dir starts again.
    await first.stop('SIGTERM');
    running.splice(running.indexOf(first), 1);
    await expect(readFile(addressFile, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    const third = await start(file);
    expect((await call(third.url, '/healthz')).status).toBe(200);
  }, 60_000);

  it('a daemon killed -9 leaves nothing that blocks the next start', async () => {
    const { file } = await organismDir(toolboxYaml('lock-killed'));
    const first = await start(file);
    await first.stop('SIGKILL');
    running.splice(running.indexOf(first), 1);
    const second = await start(file);
    expect((await useTool(second.url, 'key_value_set', { key: 'k', value: 1 })).status).toBe('ok');
  }, 60_000);
});

describe('stale locks from a dead container do not block', () => {
  for (const kind of ['a file holding pid 1', 'a socket nobody listens on'] as const) {
    it(`kv/LOCK and the data dir's lock as ${kind}: the daemon starts, side-effecting tools and approvals work`, async () => {
      const { dir, file } = await organismDir(toolboxYaml('lock-stale'));
      const data = join(dir, '.organism');
      await mkdir(join(data, 'kv'), { recursive: true, mode: 0o700 });
      for (const path of [join(data, 'kv', 'LOCK'), join(data, 'daemon.sock')]) {
        if (kind === 'a file holding pid 1') await writeFile(path, '1');
        else await deadSocket(path);
      }
      const daemon = await start(file);
      const set = await useTool(daemon.url, 'key_value_set', { key: 'k', value: 'after a stale lock' });
      expect(set.status, set.text).toBe('ok');
      const wrote = await useTool(daemon.url, 'write_file', { path: 'f.txt', content: 'x' });
      expect(wrote.status, wrote.text).toBe('ok');
      const approvals = await call(daemon.url, '/api/v1/approvals', { token: ADMIN_TOKEN });
      expect(approvals.status, approvals.text).toBe(200);
    }, 60_000);
  }

  it('`organism tools call` with a stale kv/LOCK holding pid 1 runs its side-effecting call', async () => {
    const { dir, file } = await organismDir(toolboxYaml('lock-stale-cli'));
    await mkdir(join(dir, '.organism', 'kv'), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, '.organism', 'kv', 'LOCK'), '1');
    const called = await runCli(
      [
        'tools',
        'call',
        'key_value_set',
        '--as',
        'toolbox',
        '--args',
        '{"key":"k","value":2}',
        '--config',
        file,
      ],
      TOKENS_ENV,
    );
    expect(called.code, called.stdout + called.stderr).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({ status: 'ok' });
  }, 60_000);

  it('`organism tools call` is refused with the owner named while the daemon holds the kv store', async () => {
    const { file } = await organismDir(toolboxYaml('lock-cli-busy'));
    const daemon = await start(file);
    // The daemon opens its kv store with its first call that needs it.
    expect((await useTool(daemon.url, 'key_value_set', { key: 'k', value: 1 })).status).toBe('ok');
    const called = await runCli(
      // --local: in the CLI's own process (without it the call runs in the daemon, which holds the store).
      [
        'tools',
        'call',
        'key_value_get',
        '--as',
        'toolbox',
        '--args',
        '{"key":"k"}',
        '--config',
        file,
        '--local',
      ],
      TOKENS_ENV,
    );
    expect(called.stdout + called.stderr).toContain(`in use by process ${daemon.child.pid}`);
  }, 60_000);
});

describe('journal recovery never skips a segment for a pid some other process has now', () => {
  it("recovers and delivers the accepted messages of segments named after live processes' pids, and says so", async () => {
    const { dir, file } = await organismDir(toolboxYaml('lock-journal'));
    const record = join(dir, 'handled.txt');
    await writeFile(record, '');
    // The first daemon is still on its first (10 minute) job when it is killed: 6 are accepted, none
    // handled, however slow the machine.
    const first = await start(file, { DURABILITY_RECORD: record, DURABILITY_SLEEP_MS: '600000' });
    const threads: string[] = [];
    for (let n = 0; n < 6; n++) {
      const res = await call(first.url, '/api/v1/inject', {
        token: ADMIN_TOKEN,
        body: { to: 'recorder', payload: `<job><n>${n}</n></job>` },
      });
      expect(res.status).toBe(202);
      threads.push(res.json.thread as string);
    }
    await first.stop('SIGKILL');
    running.splice(running.indexOf(first), 1);
    // Its records are put in two segments named after pids that are alive now: this test's own, and
    // 1 (a container's daemon was pid 1; here pid 1 is init, alive).
    const journal = join(dir, '.organism', 'journal');
    const names = (await readdir(journal)).filter((name) => name.startsWith('journal-')).sort();
    const lines: string[] = [];
    for (const name of names) {
      lines.push(...(await readFile(join(journal, name), 'utf8')).split('\n').filter(Boolean));
      await rm(join(journal, name));
    }
    expect(lines.filter((line) => line.startsWith('{"a":'))).toHaveLength(6);
    const half = Math.ceil(lines.length / 2);
    await writeFile(
      join(journal, `journal-${process.pid}-00000001.jsonl`),
      `${lines.slice(0, half).join('\n')}\n`,
    );
    await writeFile(join(journal, 'journal-1-00000002.jsonl'), `${lines.slice(half).join('\n')}\n`);

    const second = await start(file, { DURABILITY_RECORD: record, DURABILITY_SLEEP_MS: '0' });
    const handled = await until(async () => {
      const got = (await readFile(record, 'utf8')).split('\n').filter(Boolean);
      return got.length >= 6 ? got : undefined;
    }, 30_000);
    for (const [n, thread] of threads.entries()) expect(handled).toContain(`${thread} ${n}`);
    const recovery = second
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"component":"journal"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const read = recovery.find(
      (entry) => typeof entry.segments === 'number' && (entry.segments as number) > 0,
    );
    expect(read, second.stdout()).toBeDefined();
    expect(read).toMatchObject({ segments: 2, pending: 6 });
    expect(String(read!.msg)).toMatch(/recovered/);
  }, 90_000);
});
