/** The bubblewrap plan as argv: what is covered, in which order, and which bound applies. */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BubblewrapSandbox, hasNamespacePidMax } from '../../src/sandbox/bubblewrap.ts';
import { defaultBubblewrapOptions } from '../../src/sandbox/options.ts';
import type { SandboxRequest } from '../../src/sandbox/types.ts';

let top: string;
let ws: string;

beforeAll(async () => {
  // Outside /tmp, so the covers are not dropped as already private.
  top = await realpath(await mkdtemp('/var/tmp/organism-sandbox-plan-'));
  ws = path.join(top, 'data', 'workspace');
  await mkdir(path.join(ws, 'inner'), { recursive: true });
  await writeFile(path.join(top, '.env'), 'X=1\n');
  await writeFile(path.join(ws, 'organism.yaml'), 'x');
});
afterAll(async () => {
  await rm(top, { recursive: true, force: true });
});

const request = (over: Partial<SandboxRequest> = {}): SandboxRequest => ({
  argv: ['echo', 'hi'],
  cwd: ws,
  workspace: ws,
  hide: [
    path.join(top, 'data'),
    top,
    path.join(top, '.env'),
    path.join(ws, 'organism.yaml'),
    path.join(top, 'missing'),
  ],
  envAllowlist: ['ORGANISM_PLAN_VISIBLE'],
  from: { ORGANISM_PLAN_VISIBLE: 'v', SECRET_KEY: 's' },
  network: false,
  limits: { maxProcesses: 40, maxMemoryMb: 64 },
  ...over,
});

const sandbox = (uid: number, kernelRelease: string) =>
  new BubblewrapSandbox({ binary: 'bwrap', uid, kernelRelease, credentials: [] });

describe('the bubblewrap plan', () => {
  it("covers the keys services keep for root, and leaves the machine's trust anchors", async () => {
    // A root daemon's program reads what root may: TLS keys, VPN and cluster credentials included.
    const { credentials } = defaultBubblewrapOptions({}, '6.18.0', 0);
    for (const p of [
      '/etc/letsencrypt',
      '/etc/wireguard',
      '/etc/kubernetes',
      '/etc/pki/tls/private',
      '/var/log',
    ]) {
      expect(credentials).toContain(p);
    }
    for (const p of ['/etc/ssl/certs', '/etc/pki/tls/certs', '/etc/pki/ca-trust', '/etc/ca-certificates']) {
      expect(credentials.some((c) => p === c || p.startsWith(`${c}/`))).toBe(false);
    }
    // Each one that exists is covered (a stand-in for /etc/letsencrypt: tests write only temp folders).
    const keys = await realpath(await mkdtemp('/var/tmp/organism-letsencrypt-'));
    onTestFinished(() => rm(keys, { recursive: true, force: true }));
    const argv = new BubblewrapSandbox({
      binary: 'bwrap',
      uid: 0,
      kernelRelease: '6.1.0',
      credentials: [keys],
    }).plan(request()).argv;
    expect(argv.join(' ')).toContain(`--tmpfs ${keys}`);
  });

  it('covers what holds the workspace before binding it, and what it holds after', () => {
    const { argv } = sandbox(1000, '6.1.0').plan(request());
    const at = (...seq: string[]) => argv.findIndex((_, i) => seq.every((s, j) => argv[i + j] === s));
    const bind = at('--bind', ws, ws);
    expect(bind).toBeGreaterThan(0);
    expect(at('--tmpfs', top)).toBeGreaterThan(0);
    expect(at('--tmpfs', top)).toBeLessThan(bind);
    // Under the cover of `top` already: not covered again.
    expect(at('--tmpfs', path.join(top, 'data'))).toBe(-1);
    expect(at('--ro-bind', '/dev/null', path.join(top, '.env'))).toBe(-1);
    // Inside the workspace: covered after the bind, a file with /dev/null.
    expect(at('--ro-bind', '/dev/null', path.join(ws, 'organism.yaml'))).toBeGreaterThan(bind);
    expect(argv.join(' ')).not.toContain('missing');
  });

  it('clears the environment and sets PATH, HOME, LANG and the allowlist only', () => {
    const { argv, env } = sandbox(1000, '6.1.0').plan(request());
    expect(argv).toContain('--clearenv');
    const set = argv.flatMap((a, i) => (a === '--setenv' ? [argv[i + 1]] : []));
    expect(set.sort()).toEqual(['HOME', 'LANG', 'ORGANISM_PLAN_VISIBLE', 'PATH']);
    expect(argv).not.toContain('s');
    // bwrap itself gets only a PATH.
    expect(Object.keys(env)).toEqual(['PATH']);
  });

  it('takes the network away unless asked, and bounds processes and memory', () => {
    const off = sandbox(1000, '6.1.0').plan(request()).argv;
    const on = sandbox(1000, '6.1.0').plan(request({ network: true })).argv;
    expect(off).toContain('--unshare-net');
    expect(on).not.toContain('--unshare-net');
    expect(off.slice(off.indexOf('prlimit'))).toEqual([
      'prlimit',
      '--nproc=40',
      `--data=${64 * 1024 * 1024}`,
      '--',
      'echo',
      'hi',
    ]);
  });

  it("shows the kernel's settings read-only, after the sandbox's own /proc", () => {
    for (const [uid, release] of [
      [1000, '6.1.0'],
      [0, '6.18.44-fc'],
    ] as const) {
      const argv = sandbox(uid, release).plan(request()).argv;
      const proc = argv.findIndex((a, i) => a === '--proc' && argv[i + 1] === '/proc');
      const at = (p: string) =>
        argv.findIndex((a, i) => a === '--ro-bind-try' && argv[i + 1] === p && argv[i + 2] === p);
      expect(at('/proc/sys')).toBeGreaterThan(proc);
      expect(at('/proc/sysrq-trigger')).toBeGreaterThan(proc);
    }
  });

  it('as root on Linux 6.14+, adds the PID namespace with its own pid_max; otherwise not', () => {
    const root = sandbox(0, '6.18.44-fc').plan(request()).argv;
    expect(root.slice(0, 5)).toEqual(['setpriv', '--pdeathsig', 'KILL', '--', 'unshare']);
    // 40 processes and bwrap's own 3, PID 1 and 300 up to 342 (the namespace's last PID set to 300,
    // so the first one after it takes 301, and no PID below 300 ever comes back); RLIMIT_DATA (KiB)
    // set by the same shell, inherited through bwrap: no prlimit inside.
    const script = root.indexOf('sh') - 1;
    expect(root[script]).toContain('/proc/sys/kernel/ns_last_pid');
    expect(root.slice(script + 2, script + 6)).toEqual(['342', String(64 * 1024), '300', 'bwrap']);
    // bwrap looks its child up by the PID it sees: under the new namespace's own /proc.
    expect(root).toContain('--mount-proc');
    // A bound past the kernel's most: its most (a larger pid_max fails every command).
    const huge = sandbox(0, '6.18.44-fc').plan(
      request({ limits: { maxProcesses: 5_000_000, maxMemoryMb: 64 } }),
    );
    expect(huge.argv[huge.argv.indexOf('sh') + 1]).toBe('4194304');
    expect(root).not.toContain('prlimit');
    expect(root.slice(-3)).toEqual(['--', 'echo', 'hi']);
    expect(sandbox(0, '6.8.0').plan(request()).argv[0]).toBe('bwrap');
    expect(sandbox(1000, '6.18.0').plan(request()).argv[0]).toBe('bwrap');
    expect(hasNamespacePidMax('6.14.0')).toBe(true);
    expect(hasNamespacePidMax('7.0')).toBe(true);
    expect(hasNamespacePidMax('6.13.9')).toBe(false);
    expect(hasNamespacePidMax('5.15.0-91-generic')).toBe(false);
  });

  it('refuses a workspace that is not there and a cwd outside it', () => {
    expect(() => sandbox(1000, '6.1.0').plan(request({ workspace: path.join(top, 'nope') }))).toThrow(
      expect.objectContaining({ code: 'sandbox.bad_request' }),
    );
    expect(() => sandbox(1000, '6.1.0').plan(request({ cwd: top }))).toThrow(
      expect.objectContaining({ code: 'sandbox.bad_request' }),
    );
    expect(() => sandbox(1000, '6.1.0').plan(request({ hide: ['/'] }))).not.toThrow();
    expect(
      sandbox(1000, '6.1.0')
        .plan(request({ hide: ['/'] }))
        .argv.join(' '),
    ).not.toContain('--tmpfs / ');
  });

  it('runs for real, as planned', async () => {
    const { spawnSync } = await import('node:child_process');
    const real = new BubblewrapSandbox();
    if (real.unavailable()) throw new Error(`bwrap is needed for this test: ${real.unavailable()}`);
    const plan = real.plan(
      request({ argv: ['sh', '-c', 'cat organism.yaml; ls ../..; echo $ORGANISM_PLAN_VISIBLE'] }),
    );
    const [program = '', ...args] = plan.argv;
    const out = spawnSync(program, args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8' });
    expect(out.stdout).toBe('data\nv\n');
  });
});
