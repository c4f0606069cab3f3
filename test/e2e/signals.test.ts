/**
 * Signals reach the daemon however it was started: `node bin/organism.js run`, the systemd unit in
 * the README (its ExecStart line, run as systemd would), `npm start` and `npx organism run` (from a
 * project that depends on organism). Stopping what was started ends the daemon: the process is
 * gone and nothing listens on its port any more. npm killed outright (SIGKILL) takes the daemon
 * with it too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, LISTENING, localToken, ORGANISM_BIN, REPO_ROOT } from '../helpers/daemon.ts';

const DRAIN_MS = 1_000;
/** What the daemon promises: out within drain_timeout_ms + 2 s of the stop. */
const STOP_BOUND_MS = DRAIN_MS + 2_000;

let dir = '';
const launched: ChildProcess[] = [];
const daemons: number[] = [];
afterEach(async () => {
  for (const child of launched)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const pid of daemons) if (alive(pid)) process.kill(pid, 'SIGKILL');
  launched.length = 0;
  daemons.length = 0;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = '';
});

async function organism(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'organism-signals-'));
  const file = join(dir, 'organism.yaml');
  await writeFile(
    file,
    `organism:
  name: signals-test
  data_dir: ${join(dir, 'data')}
server:
  host: 127.0.0.1
  port: 0
bus:
  drain_timeout_ms: ${DRAIN_MS}
listeners:
  - name: greeter
    handler: ${join(REPO_ROOT, 'listeners/greeter.ts')}
    peers: [shouter]
  - name: shouter
    handler: ${join(REPO_ROOT, 'listeners/shouter.ts')}
    peers: [printer]
  - name: printer
    handler: ${join(REPO_ROOT, 'listeners/printer.ts')}
`,
  );
  return file;
}

interface Started {
  /** What the test started (npm, npx, or the daemon itself). */
  launcher: ChildProcess;
  url: string;
  /** The daemon's own process, as it reports it. */
  pid: number;
  /** What the launcher printed so far (stdout and stderr). */
  output(): string;
}

/** Starts `command` and waits until the daemon under it listens; asks the daemon its pid. */
async function launch(command: string, args: string[], cwd: string): Promise<Started> {
  const launcher = spawn(command, args, { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  launched.push(launcher);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no daemon came up:\n${output}`)), 30_000);
    const look = (chunk: Buffer) => {
      output += chunk;
      const match = LISTENING.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    launcher.stdout!.on('data', look);
    launcher.stderr!.on('data', look);
    launcher.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited ${code} before the daemon listened:\n${output}`));
    });
  });
  const token = await localToken(join(dir, 'data'));
  const info = (await (await fetch(`${url}/api/v1/organism`, { headers: bearer(token) })).json()) as {
    pid: number;
  };
  daemons.push(info.pid);
  return { launcher, url, pid: info.pid, output: () => output };
}

/** The process exists and is not a zombie waiting for a parent to reap it. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** How long the daemon took to go after `signal` reached `target` (Infinity: still there after the bound plus slack). */
async function stopped(started: Started, target: ChildProcess, signal: NodeJS.Signals): Promise<number> {
  const at = Date.now();
  target.kill(signal);
  while (alive(started.pid)) {
    if (Date.now() - at > STOP_BOUND_MS + 3_000) return Number.POSITIVE_INFINITY;
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - at;
}

async function listening(url: string): Promise<boolean> {
  return fetch(`${url}/api/v1/organism`).then(
    () => true,
    () => false,
  );
}

/** Checks what every way of stopping must give: the daemon gone in time, its port closed. */
async function expectStopped(started: Started, ms: number, how: string): Promise<void> {
  console.log(`${how}: the daemon (pid ${started.pid}) was gone ${ms} ms after the stop`);
  expect(ms, how).toBeLessThanOrEqual(STOP_BOUND_MS);
  expect(await listening(started.url), `${how}: nothing listens on ${started.url}`).toBe(false);
}

/** The guide's page with the systemd unit (docs/guide/service.md). */
const SERVICE_PAGE = join(REPO_ROOT, 'docs/guide/service.md');

/**
 * The ExecStart line of the guide's systemd unit, as arguments: the project's installed package
 * (`/opt/my-organism/node_modules/organism`) is this checkout, its organism.yaml is `config`.
 */
function systemdExecStart(config: string): string[] {
  const line = /^ExecStart=(.+)$/m.exec(readFileSync(SERVICE_PAGE, 'utf8'))?.[1];
  if (!line) throw new Error(`no ExecStart line in ${SERVICE_PAGE}`);
  return line
    .trim()
    .split(/\s+/)
    .map((word) =>
      word === '/opt/my-organism/organism.yaml'
        ? config
        : word.replace(/^\/opt\/my-organism\/node_modules\/organism(?=\/)/, REPO_ROOT.replace(/\/$/, '')),
    );
}

describe('signals reach the daemon', { timeout: 60_000 }, () => {
  it('node bin/organism.js run: SIGTERM stops it', async () => {
    const config = await organism();
    const started = await launch(process.execPath, [ORGANISM_BIN, 'run', '--config', config], REPO_ROOT);
    expect(started.pid).toBe(started.launcher.pid);
    await expectStopped(
      started,
      await stopped(started, started.launcher, 'SIGTERM'),
      'node bin/organism.js run',
    );
  });

  it('a second SIGINT (a Ctrl-C reaches npm and the daemon alike, and npm passes its own on) does not cut the shutdown short', async () => {
    const config = await organism();
    const started = await launch(process.execPath, [ORGANISM_BIN, 'run', '--config', config], REPO_ROOT);
    const exit = new Promise<number | null>((r) => started.launcher.once('exit', (code) => r(code)));
    started.launcher.kill('SIGINT');
    started.launcher.kill('SIGINT');
    expect(await exit).toBe(0);
    expect(started.output()).toMatch(/"msg":"organism stopped"/);
  });

  it("the guide's systemd unit: SIGTERM to its main process stops it, well inside TimeoutStopSec", async () => {
    const config = await organism();
    const [command, ...args] = systemdExecStart(config);
    expect(command).toBe('/usr/bin/node');
    const started = await launch(process.execPath, args, REPO_ROOT);
    // Type=simple: the process systemd starts is the daemon, its MainPID.
    expect(started.pid).toBe(started.launcher.pid);
    await expectStopped(started, await stopped(started, started.launcher, 'SIGTERM'), 'systemd unit');
    const timeoutStopSec = Number(/^TimeoutStopSec=(\d+)$/m.exec(readFileSync(SERVICE_PAGE, 'utf8'))?.[1]);
    expect(timeoutStopSec * 1000).toBeGreaterThan(10_000 + 2_000); // the default drain_timeout_ms, + 2 s
  });

  it('npm start: SIGTERM to npm stops the daemon, and npm exits with it', async () => {
    const config = await organism();
    const started = await launch('npm', ['start', '--', '--config', config], REPO_ROOT);
    const npmExit = new Promise((r) => started.launcher.once('exit', r));
    await expectStopped(started, await stopped(started, started.launcher, 'SIGTERM'), 'npm start');
    await npmExit;
  });

  it('npm start: npm killed outright (SIGKILL) takes the daemon with it', async () => {
    const config = await organism();
    const started = await launch('npm', ['start', '--', '--config', config], REPO_ROOT);
    await expectStopped(
      started,
      await stopped(started, started.launcher, 'SIGKILL'),
      'npm start, npm killed',
    );
  });

  it('npx organism run, in a project that depends on organism: SIGTERM to npx stops the daemon', async () => {
    const config = await organism();
    // A project with organism installed: node_modules/organism and its bin link, as npm lays them out.
    const project = join(dir, 'project');
    await mkdir(join(project, 'node_modules', '.bin'), { recursive: true });
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'uses-organism', private: true, dependencies: { organism: '*' } }),
    );
    await symlink(REPO_ROOT.replace(/\/$/, ''), join(project, 'node_modules', 'organism'));
    await symlink('../organism/bin/organism.js', join(project, 'node_modules', '.bin', 'organism'));
    // --no: never fetch anything; the installed bin runs.
    const started = await launch('npx', ['--no', 'organism', 'run', '--config', config], project);
    await expectStopped(started, await stopped(started, started.launcher, 'SIGTERM'), 'npx organism run');
  });
});
