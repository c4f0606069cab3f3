/**
 * Attack on the sandbox (issue 25 point 5): file descriptors the daemon got from its launcher. A
 * supervisor or a shell redirect (`organism run 40</other/.env 41>>/elsewhere/log`) leaves fds open
 * in the daemon without close-on-exec; Node marks only the first run of them (up to the first gap
 * after fd 15), libuv's spawn does not close the rest and bwrap passes them through. A program in
 * the sandbox then read another organism's .env through one and wrote outside through another.
 * The real daemon is started here as such a launcher would (spawn with stdio entries at 40 and 41,
 * nothing in between), and run_command and a stdio MCP server look for them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTENING, ORGANISM_BIN, REPO_ROOT, runCli } from '../helpers/daemon.ts';
import { RUG } from '../mcp/helpers.ts';

const SECRET = 'OTHER_ORGANISM_API_KEY=sk-other-7731-fd';
const toolbox = join(REPO_ROOT, 'listeners', 'toolbox.ts');

let dir: string;
let outside: string;
let child: ChildProcess;
let url: string;
let out = '';
let dataDir: string;
let config: string;

/** Starts the daemon with `fds` open at stdio positions 40.. and nothing between 3 and 39. */
function launch(config: string, fds: number[]): Promise<string> {
  const stdio: ('ignore' | 'pipe' | number)[] = [
    'ignore',
    'pipe',
    'pipe',
    ...Array(37).fill('ignore'),
    ...fds,
  ];
  child = spawn(process.execPath, [ORGANISM_BIN, 'run', '--port', '0', '--config', config], {
    cwd: REPO_ROOT,
    env: process.env,
    stdio,
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start:\n${out}`)), 30_000);
    child.once('exit', (code) => reject(new Error(`daemon exited ${code}:\n${out}`)));
    const look = (chunk: Buffer) => {
      out += chunk;
      const match = LISTENING.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
  });
}

/** Calls `tool` through the toolbox listener, with the local token when the daemon keeps one. */
async function use(tool: string, args: object): Promise<{ status: string; text: string }> {
  // The local API token, as the CLI on this machine finds it (none: a daemon without one).
  const file = /"token_file":"([^"]+)"/.exec(out)?.[1] ?? join(dataDir, 'api-token');
  const token = await readFile(file, 'utf8').then(
    (t) => t.trim(),
    () => undefined,
  );
  const json = JSON.stringify(args).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const payload = `<use-tool><tool>${tool}</tool><args>${json}</args></use-tool>`;
  const { code, stdout, stderr } = await runCli(
    ['send', '--url', url, '--to', 'toolbox', payload, '--wait'],
    token ? { ORGANISM_TOKEN: token } : {},
  );
  const answer = stdout.split('\n').find((line) => line.startsWith('toolbox -> api')) ?? '';
  const status = /<status>([^<]*)<\/status>/.exec(answer)?.[1];
  if (code !== 0 || status === undefined)
    throw new Error(`no tool answer (exit ${code}):\n${stdout}${stderr}`);
  return { status, text: answer };
}

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'organism-fds-')));
  outside = join(dir, 'other-organism');
  await mkdir(outside);
  await writeFile(join(outside, '.env'), `${SECRET}\n`);
  await writeFile(join(outside, 'log'), '');
  const project = join(dir, 'project');
  await mkdir(project);
  dataDir = join(project, '.organism');
  config = join(project, 'organism.yaml');
  await writeFile(
    config,
    `organism:
  name: fds
mcp_servers:
  - name: rug
    command: ${process.execPath}
    args: [${JSON.stringify(RUG)}]
    capabilities: { read: read, ls: read }
listeners:
  - name: toolbox
    description: Calls tools.
    handler: ${toolbox}
    trust: high
    tools: [run_command, rug.read, rug.ls]
    tool_config:
      run_command: { shell: true }
`,
  );
  const envFd = openSync(join(outside, '.env'), 'r');
  const logFd = openSync(join(outside, 'log'), 'a');
  try {
    url = await launch(config, [envFd, logFd]);
  } finally {
    // The daemon has its own copies now, as it would have from a supervisor.
    closeSync(envFd);
    closeSync(logFd);
  }
}, 40_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
});

describe('fds the daemon inherited do not reach sandboxed programs', () => {
  it('run_command sees only fds 0-2, cannot read the .env through fd 40 nor write through fd 41', async () => {
    const { status, text } = await use('run_command', {
      command:
        'echo "fds: $(ls /proc/$$/fd | tr "\\n" " ")"; cat /proc/self/fd/40; echo pwned-through-41 >> /proc/self/fd/41; ' +
        'python3 -c "import os; print(sorted(os.listdir(\'/proc/self/fd\')))"; true',
    });
    expect(status).toBe('ok');
    expect(text).toContain('fds: 0 1 2 ');
    expect(text).not.toContain('sk-other-7731-fd');
    expect(await readFile(join(outside, 'log'), 'utf8')).toBe('');
    // python's own listing: 0-2 and the folder it is reading (3).
    expect(text).toContain("['0', '1', '2', '3']");
  });

  it('a stdio MCP server in the sandbox cannot read through fd 40', async () => {
    const read = await use('rug.read', { path: '/proc/self/fd/40' });
    expect(read.status).toBe('ok');
    expect(read.text).not.toContain('sk-other-7731-fd');
    expect(read.text).toContain('ERR ENOENT');
    const listed = await use('rug.ls', { path: '/proc/self/fd' });
    expect(listed.text).not.toMatch(/&quot;4[01]&quot;|"4[01]"/);
  });

  it('the daemon itself no longer holds them, and said so at start', async () => {
    const fds = await readdir(`/proc/${child.pid}/fd`);
    expect(fds.length).toBeGreaterThan(3);
    expect(fds).not.toContain('40');
    expect(fds).not.toContain('41');
    // Named with what they pointed at (the test runner may pass its own along, hence \\d+).
    expect(out).toMatch(
      /closed \d+ file descriptor\(s\) inherited without close-on-exec \([^)]*40 -> [^,]*other-organism\/\.env, 41 -> [^)]*other-organism\/log/,
    );
  });

  it('organism tools call started the same way: its program sees only fds 0-2', async () => {
    const envFd = openSync(join(outside, '.env'), 'r');
    const logFd = openSync(join(outside, 'log'), 'a');
    const stdio: ('ignore' | 'pipe' | number)[] = [
      'ignore',
      'pipe',
      'pipe',
      ...Array(37).fill('ignore'),
      envFd,
      logFd,
    ];
    const call = spawn(
      process.execPath,
      [
        ORGANISM_BIN,
        'tools',
        'call',
        'run_command',
        '--config',
        config,
        '--as',
        'toolbox',
        '--args',
        JSON.stringify({
          command:
            'echo "fds: $(ls /proc/$$/fd | tr "\\n" " ")"; cat /proc/self/fd/40; echo pwned >> /proc/self/fd/41; true',
        }),
      ],
      { cwd: REPO_ROOT, env: process.env, stdio },
    );
    closeSync(envFd);
    closeSync(logFd);
    let text = '';
    call.stdout!.on('data', (c) => {
      text += c;
    });
    call.stderr!.on('data', (c) => {
      text += c;
    });
    const code = await new Promise((resolve) => call.once('exit', resolve));
    expect(code).toBe(0);
    expect(text).toContain('fds: 0 1 2 ');
    expect(text).not.toContain('sk-other-7731-fd');
    expect(await readFile(join(outside, 'log'), 'utf8')).toBe('');
  }, 30_000);
});
