/**
 * run_command in the real bubblewrap sandbox, with an organism laid out as `organism init` would:
 * organism.yaml and .env in one folder, the data dir under it, the workspace inside the data dir.
 * Each test is an attack from issue 14 that worked without the sandbox.
 */
import { spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolConfig } from '../../src/config/types.ts';
import { testConfig } from '../../src/testing/index.ts';
import type { ToolRunContext } from '../../src/tools/types.ts';
import runCommand from '../../tools/run-command.ts';
import { allowAll, makeContext, toolDispatcher } from '../tools/tool-helpers.ts';

let root: string;
let dataDir: string;
let ws: string;
let configFile: string;

function ctx(config: ToolConfig = {}): ToolRunContext {
  const base = makeContext({
    config,
    workspace: ws,
    sections: {
      file: configFile,
      organism: { name: 't', data_dir: dataDir, workspace: ws },
      tools: {
        manifest: path.join(root, 'tools.manifest.json'),
        revocations_file: path.join(dataDir, 'revocations.json'),
      },
      audit: { path: path.join(dataDir, 'audit.jsonl') },
    },
  });
  return { ...base, dataDir };
}

const run = (command: string, config: ToolConfig = {}, extra: { timeout_ms?: number } = {}) =>
  runCommand.run({ command, ...extra }, ctx({ shell: true, ...config }));

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-sandbox-')));
  configFile = path.join(root, 'organism.yaml');
  dataDir = path.join(root, '.organism');
  ws = path.join(dataDir, 'workspace');
  await mkdir(ws, { recursive: true });
  await mkdir(path.join(dataDir, 'kv'));
  await mkdir(path.join(dataDir, 'librarian', 'db'), { recursive: true });
  await writeFile(configFile, 'organism:\n  name: t\n');
  await writeFile(path.join(root, '.env'), 'SMTP_PASSWORD=dotenv-secret-4821\n');
  await writeFile(path.join(root, 'tools.manifest.json'), '{"manifest":"secret-manifest-77"}');
  await writeFile(path.join(dataDir, 'kv', 'kv.log'), '{"k":"other-listener-value-913"}\n');
  await writeFile(path.join(dataDir, 'librarian', 'db', 'doc.xml'), '<doc>private-collection-552</doc>');
  await writeFile(path.join(dataDir, 'audit.jsonl'), '{"type":"call","tool":"send_email"}\n');
  await writeFile(path.join(ws, 'notes.txt'), 'workspace-file-ok');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('run_command in bubblewrap: what it can see', () => {
  it('reads and writes the workspace, the one writable folder', async () => {
    const r = await run('cat notes.txt && echo made > made.txt && pwd');
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toBe(`workspace-file-ok${ws}\n`);
    expect(await readFile(path.join(ws, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it("cannot read the daemon's environment through /proc", async () => {
    process.env.ORGANISM_FAKE_SECRET = 'fake-secret-value-6604';
    try {
      const r = await run(
        `cat /proc/${process.pid}/environ; cat /proc/$PPID/environ; grep -a -r -h -o 'fake-secret-value-[0-9]*' /proc/*/environ; ls /proc`,
      );
      expect(r.stdout + r.stderr).not.toContain('fake-secret-value-6604');
      // Its own PID namespace: the test's pid is not there, and only a handful of processes are.
      const pids = r.stdout.split('\n').filter((l) => /^\d+$/.test(l));
      expect(pids).not.toContain(String(process.pid));
      expect(pids.length).toBeLessThan(10);
    } finally {
      delete process.env.ORGANISM_FAKE_SECRET;
    }
  });

  it('cannot reach the data dir by ../ or by absolute path (kv, librarian, audit)', async () => {
    const r = await run(
      'cat ../kv/kv.log; cat ../librarian/db/doc.xml; cat ../audit.jsonl; ' +
        `cat ${dataDir}/kv/kv.log ${dataDir}/librarian/db/doc.xml ${dataDir}/audit.jsonl`,
    );
    const seen = r.stdout + r.stderr;
    expect(seen).not.toContain('other-listener-value-913');
    expect(seen).not.toContain('private-collection-552');
    expect(seen).not.toContain('"tool":"send_email"');
    // Listed, the data dir holds the workspace alone (its bind), nothing else.
    const listed = await run(`ls -a ${dataDir}; ls -a ..`);
    expect(listed.stdout).toBe('.\n..\nworkspace\n.\n..\nworkspace\n');
  });

  it('cannot see the config folder: organism.yaml, the .env beside it, the manifest', async () => {
    const r = await run(
      `cat ${root}/.env ${configFile} ${root}/tools.manifest.json; cat ../../.env; grep -r -h PASSWORD ../.. ; ls -a ${root}`,
    );
    const seen = r.stdout + r.stderr;
    expect(seen).not.toContain('dotenv-secret-4821');
    expect(seen).not.toContain('secret-manifest-77');
    expect(seen).not.toContain('name: t');
    expect(r.stdout).not.toMatch(/^\.env$/m);
  });

  it('cannot read /etc/shadow however the path is spelled', async () => {
    const host = await readFile('/etc/shadow', 'utf8').catch(() => '');
    const r = await run(`head -c 60 /etc//shadow; cat /etc/./shadow; cat /etc/shado[w]; cat /etc/gshadow`);
    if (host.includes('root:')) expect(r.stdout).not.toContain('root:');
    expect(r.stdout).toBe('');
  });

  it('writes to /tmp stay in the sandbox, not on the host', async () => {
    const name = `organism-sbx-${process.pid}-${Date.now()}`;
    const r = await run(`touch /tmp/${name} && ls /tmp/${name}`);
    expect(r.exit_code).toBe(0);
    expect(await exists(path.join('/tmp', name))).toBe(false);
  });

  it('cannot write outside the workspace', async () => {
    const usr = `/usr/organism-sbx-${process.pid}-${Date.now()}`;
    try {
      const r = await run(`touch ${dataDir}/x; touch ${root}/x; touch ${usr}; echo done`);
      expect(r.stdout).toBe('done\n');
      expect(await exists(path.join(dataDir, 'x'))).toBe(false);
      expect(await exists(path.join(root, 'x'))).toBe(false);
      expect(await exists(usr)).toBe(false);
    } finally {
      await rm(usr, { force: true });
    }
  });

  it('gets only the allowlisted environment, with a PATH, HOME and LANG of its own', async () => {
    process.env.ORGANISM_TEST_VISIBLE = 'visible';
    process.env.FAKE_API_KEY = 'secret-value-123';
    try {
      const r = await run('env', { env_allowlist: ['ORGANISM_TEST_VISIBLE'] });
      const names = r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('=')[0])
        .sort();
      expect(names).toEqual(['HOME', 'LANG', 'ORGANISM_TEST_VISIBLE', 'PATH', 'PWD'].sort());
      expect(r.stdout).toContain('HOME=/tmp\n');
      expect(r.stdout).not.toContain('secret-value-123');
    } finally {
      delete process.env.ORGANISM_TEST_VISIBLE;
      delete process.env.FAKE_API_KEY;
    }
  });

  it('says command not found as before', async () => {
    await expect(run('no-such-program-xyz', { shell: false })).rejects.toMatchObject({
      code: 'command.not_found',
    });
  });
});

describe('run_command in bubblewrap: lifetime and bounds', () => {
  it('kills what the program started, setsid included, when it exits', async () => {
    await rm(path.join(ws, 'late'), { force: true });
    // The pause lets setsid leave the process group before the program exits (as `setsid sleep 97` did).
    const r = await run(
      `setsid sh -c 'sleep 1; touch ${ws}/late' > /dev/null 2>&1 & sleep 0.3; echo started`,
    );
    expect(r.stdout).toBe('started\n');
    await new Promise((resolve) => setTimeout(resolve, 1800));
    expect(await exists(path.join(ws, 'late'))).toBe(false);
  });

  it('kills what the program started, setsid included, on timeout', async () => {
    await rm(path.join(ws, 'late2'), { force: true });
    const r = await run(`setsid sh -c 'sleep 1; touch ${ws}/late2' & sleep 30`, {}, { timeout_ms: 300 });
    expect(r.timed_out).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1800));
    expect(await exists(path.join(ws, 'late2'))).toBe(false);
  });

  it('kills everything when the daemon dies', async () => {
    await rm(path.join(ws, 'late3'), { force: true });
    // A stand-in daemon: a node process that starts the sandbox as run_command does, then is killed.
    const { BubblewrapSandbox } = await import('../../src/sandbox/bubblewrap.ts');
    const plan = new BubblewrapSandbox().plan({
      argv: ['sh', '-c', `setsid sh -c 'sleep 1; touch ${ws}/late3' & sleep 30`],
      cwd: ws,
      workspace: ws,
      hide: [dataDir],
      envAllowlist: [],
      network: false,
      limits: { maxProcesses: 64, maxMemoryMb: 256 },
    });
    const script = `const { spawn } = require('node:child_process'); const [p, ...a] = ${JSON.stringify(plan.argv)};
      spawn(p, a, { cwd: ${JSON.stringify(plan.cwd)}, env: ${JSON.stringify(plan.env)}, stdio: 'ignore', detached: true });
      setInterval(() => {}, 1000);`;
    const daemon = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, 400));
    daemon.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 1800));
    expect(await exists(path.join(ws, 'late3'))).toBe(false);
  });

  it('bounds the number of processes, and a fork bomb returns', async () => {
    // First the bound itself: a subshell starts up to 600 sleeps (harmless were it unbounded) and
    // dies at the first fork refused; the shell then counts with builtins only, as it cannot fork.
    const counted = await run(
      '(n=0; while [ $n -lt 600 ]; do sleep 5 & n=$((n+1)); done) 2>/dev/null; set -- /proc/[0-9]*; echo $#',
      { max_processes: 50 },
      { timeout_ms: 20_000 },
    );
    const alive = Number(counted.stdout.trim());
    expect(alive).toBeGreaterThan(10);
    // RLIMIT_NPROC binds non-root; as root, the PID namespace's pid_max, to the same count (it was
    // 300 whatever max_processes said, before the namespace's PIDs started at 300).
    expect(alive).toBeLessThanOrEqual(51);
    // Only then the real thing: the call comes back, with forks refused inside. (About 2 s alone;
    // in a full run at a load average of 10 on 2 cores it once ran past a 10 s timeout.) The bomb
    // goes off in a subshell: the shell that reports makes no fork once it has started (run in that
    // shell, its `bomb | bomb &` forked the pipe's second half after the first had begun, and under
    // load that fork was refused now and then, which ends dash with status 2 and no "survived").
    const started = Date.now();
    const bomb = await run(
      'sleep 2 & s=$!; (bomb() { bomb | bomb & }; bomb) & wait $s; echo survived',
      { max_processes: 50 },
      { timeout_ms: 25_000 },
    );
    expect(Date.now() - started).toBeLessThan(27_000);
    expect(bomb.stdout, JSON.stringify(bomb).slice(0, 600)).toContain('survived');
    expect(bomb.stderr).toMatch(/fork/i);
  }, 60_000);

  it('still runs several processes at once after a command has started hundreds in turn', async () => {
    // As root the bound is the namespace's pid_max, and once a namespace has handed out PID 300 the
    // kernel takes new PIDs from 300 up only: with pid_max 301 that left one process at a time, so a
    // build or a loop that had run 400 programs could no longer run a pipeline.
    const many = await run(
      'i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i+1)); done; echo ran $i; ' +
        '(sleep 0.2 & sleep 0.2 & sleep 0.2 & wait) && echo three-at-once; echo a b | tr a-z A-Z',
      { max_processes: 50 },
      { timeout_ms: 30_000 },
    );
    expect(many.stderr).not.toMatch(/fork/i);
    expect(many.stdout).toBe('ran 400\nthree-at-once\nA B\n');
  }, 40_000);

  it("cannot change the kernel's settings, even when the daemon is root", async () => {
    // bwrap covers /proc/sys read-only only where it finds the folder writable, and procfs answers
    // that no for the folder while it lets host root write the files in it: a root daemon's command
    // could set kernel.core_pattern to '|/its/program', which the kernel then runs as root outside
    // on the next crash. Each value is written back as it was, so the machine's settings stay put
    // even where the write goes through.
    const settings = ['kernel/core_pattern', 'kernel/printk_ratelimit', 'vm/overcommit_memory'];
    const written = await run(
      settings
        .map((s) => `v=$(cat /proc/sys/${s}); printf '%s\\n' "$v" > /proc/sys/${s} && echo "wrote ${s}"`)
        .join('; '),
    );
    expect(written.stdout).toBe('');
    expect(written.stderr).toMatch(/Read-only file system/);
    // Still readable: programs that read a setting (the page size, pid_max...) keep working.
    const read = await run('cat /proc/sys/kernel/core_pattern /proc/sys/vm/overcommit_memory');
    expect(read.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('bounds memory per process', async () => {
    const alloc = (mb: number) =>
      `node -e "const a = []; for (let i = 0; i < ${mb / 16}; i++) a.push(Buffer.alloc(16 * 1024 * 1024, 1)); console.log('allocated')"`;
    const small = await run(alloc(32), { max_memory_mb: 256 }, { timeout_ms: 20_000 });
    expect(small.stdout).toBe('allocated\n');
    const big = await run(alloc(1024), { max_memory_mb: 256 }, { timeout_ms: 20_000 });
    expect(big.stdout).not.toContain('allocated');
    expect(big.exit_code).not.toBe(0);
  }, 40_000);
});

describe('run_command in bubblewrap: network', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('loopback-answer-31'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  const fetchCommand = () =>
    `node -e "fetch('http://127.0.0.1:${port}/').then(r => r.text()).then(t => console.log('got ' + t), e => console.log('failed ' + (e.cause?.code ?? e.message)))"`;

  it('is off by default: a loopback server of the host is unreachable', async () => {
    const r = await run(fetchCommand(), {}, { timeout_ms: 20_000 });
    expect(r.stdout).toMatch(/^failed /);
    expect(r.stdout).not.toContain('loopback-answer-31');
  }, 30_000);

  it('network: true reaches it', async () => {
    const r = await run(fetchCommand(), { network: true }, { timeout_ms: 20_000 });
    expect(r.stdout).toBe('got loopback-answer-31\n');
  }, 30_000);
});

describe('sandbox: none', () => {
  it('runs unconfined, and the runtime warns about it', async () => {
    const r = await run(`cat ${dataDir}/kv/kv.log`, { sandbox: 'none' });
    expect(r.stdout).toContain('other-listener-value-913');
    const d = toolDispatcher({
      tools: [runCommand],
      listener: { name: 'loose', tools: ['run_command'], tool_config: { run_command: { sandbox: 'none' } } },
      workspace: ws,
      guard: allowAll,
    });
    expect(d.notices()).toEqual([
      { listener: 'loose', tool: 'run_command', notice: expect.stringContaining('sandbox: none') },
    ]);
    expect(d.availability('loose')[0]).toMatchObject({ available: true, notice: expect.any(String) });
  });

  it('is refused as a value unless spelled exactly', async () => {
    await expect(run('true', { sandbox: 'off' })).rejects.toMatchObject({ code: 'command.bad_config' });
    const d = () =>
      toolDispatcher({
        tools: [runCommand],
        listener: { name: 'x', tools: ['run_command'], tool_config: { run_command: { sandbox: 'off' } } },
        workspace: ws,
        guard: allowAll,
        config: testConfig(),
      });
    expect(d).toThrow(/tool_config\.run_command\.sandbox/);
  });
});

describe('a workspace that holds the config and the data dir', () => {
  it('still hides organism.yaml, its .env and the data dir inside it', async () => {
    const top = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-sandbox-ws-')));
    try {
      await writeFile(path.join(top, 'organism.yaml'), 'organism:\n  name: inside-ws-19\n');
      await writeFile(path.join(top, '.env'), 'OPENAI_API_KEY=sk-dotenv-in-ws-27\n');
      await mkdir(path.join(top, 'data', 'kv'), { recursive: true });
      await writeFile(path.join(top, 'data', 'kv', 'kv.log'), 'kv-in-ws-38');
      await writeFile(path.join(top, 'readme.txt'), 'visible-44');
      const context = {
        ...makeContext({
          config: { shell: true },
          workspace: top,
          sections: {
            file: path.join(top, 'organism.yaml'),
            organism: { name: 't', data_dir: path.join(top, 'data'), workspace: top },
          },
        }),
        dataDir: path.join(top, 'data'),
      };
      const r = await runCommand.run(
        { command: 'cat readme.txt organism.yaml .env data/kv/kv.log; ls -a data' },
        context,
      );
      const seen = r.stdout + r.stderr;
      expect(r.stdout).toContain('visible-44');
      expect(seen).not.toContain('inside-ws-19');
      expect(seen).not.toContain('sk-dotenv-in-ws-27');
      expect(seen).not.toContain('kv-in-ws-38');
      expect(r.stdout).not.toMatch(/^kv$/m);
    } finally {
      await rm(top, { recursive: true, force: true });
    }
  });
});
