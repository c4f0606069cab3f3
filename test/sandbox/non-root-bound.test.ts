/**
 * The process bound of a daemon that is not root: RLIMIT_NPROC, set by prlimit inside bwrap's user
 * namespace. The suite runs as root in CI, where run_command takes the pid_max bound instead
 * (run-command-sandbox.test.ts); here the plan a non-root daemon makes is run as an unprivileged
 * uid, so the bound most users get is exercised too. Run as non-root, the suite's own sandbox tests
 * already cover this path and these repeat them.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubblewrapSandbox } from '../../src/sandbox/bubblewrap.ts';

/** nobody: owns nothing the test touches, so only what the sandbox grants it is reachable. */
const UID = 65534;
const asRoot = process.getuid?.() === 0;
const uid = asRoot ? UID : (process.getuid?.() ?? 1000);

let ws: string;

beforeAll(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-nonroot-')));
  await chmod(ws, 0o777);
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

/** Runs `script` under `sh -c` in the plan a daemon of `uid` makes, as that uid. */
function run(
  script: string,
  maxProcesses: number,
  maxMemoryMb = 256,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const sandbox = new BubblewrapSandbox({ uid, credentials: [] });
  expect(sandbox.pidMaxBound).toBe(false);
  const plan = sandbox.plan({
    argv: ['sh', '-c', script],
    cwd: ws,
    workspace: ws,
    hide: [],
    envAllowlist: [],
    network: false,
    limits: { maxProcesses, maxMemoryMb },
  });
  expect(plan.argv).toContain(`--nproc=${maxProcesses}`);
  const [program, ...args] = plan.argv;
  const child = spawn(program!, args, {
    cwd: plan.cwd,
    env: plan.env,
    ...(asRoot ? { uid: UID, gid: UID } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the bounds of a daemon that is not root (RLIMIT_NPROC, RLIMIT_DATA)', () => {
  it('holds a program to max_processes at once', async () => {
    const counted = await run(
      '(n=0; while [ $n -lt 200 ]; do sleep 5 & n=$((n+1)); done) 2>/dev/null; set -- /proc/[0-9]*; echo $#',
      30,
    );
    const alive = Number(counted.stdout.trim());
    expect(alive, counted.stderr).toBeGreaterThan(10);
    expect(alive).toBeLessThanOrEqual(31);
  }, 30_000);

  it('still runs several processes at once after hundreds in turn', async () => {
    const many = await run(
      'i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i+1)); done; echo ran $i; ' +
        '(sleep 0.2 & sleep 0.2 & sleep 0.2 & wait) && echo three-at-once; echo a b | tr a-z A-Z',
      30,
    );
    expect(many.stderr).not.toMatch(/fork/i);
    expect(many.stdout).toBe('ran 400\nthree-at-once\nA B\n');
  }, 30_000);

  it('does not count the uid’s processes outside the sandbox', async () => {
    // Twenty processes of the same uid outside, a bound of ten inside: the program still forks.
    const outside = Array.from({ length: 20 }, () =>
      spawn('sleep', ['20'], { ...(asRoot ? { uid: UID, gid: UID } : {}), stdio: 'ignore' }),
    );
    try {
      const two = await run('(sleep 0.2 & sleep 0.2 & wait) && echo two-at-once', 10);
      expect(two.stderr).not.toMatch(/fork/i);
      expect(two.stdout).toBe('two-at-once\n');
    } finally {
      for (const p of outside) p.kill('SIGKILL');
    }
  }, 30_000);

  it('holds each process to max_memory_mb', async () => {
    const alloc = (mb: number) =>
      `node -e "const a = []; for (let i = 0; i < ${mb / 16}; i++) a.push(Buffer.alloc(16 * 1024 * 1024, 1)); console.log('allocated')"`;
    const small = await run(alloc(32), 30, 256);
    expect(small.stdout, small.stderr.slice(0, 400)).toBe('allocated\n');
    const big = await run(alloc(1024), 30, 256);
    expect(big.stdout).not.toContain('allocated');
    expect(big.code).not.toBe(0);
  }, 30_000);

  it('returns from a fork bomb', async () => {
    const bomb = await run('sleep 1 & s=$!; (bomb() { bomb | bomb & }; bomb) & wait $s; echo survived', 30);
    expect(bomb.stdout, bomb.stderr.slice(0, 400)).toContain('survived');
    expect(bomb.stderr).toMatch(/fork/i);
  }, 30_000);
});
