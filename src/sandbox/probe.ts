/**
 * Whether bubblewrap can run programs here: its programs exist and it can create its namespaces.
 * Checked by running `true` in the very sandbox run_command would use, once per binary and set-up
 * (the answer is cached for the life of the process), so a missing package or a kernel that refuses
 * user namespaces makes run_command unavailable with the reason, instead of failing every call.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { type BubblewrapOptions, SANDBOX_CONFIG_DEFAULTS } from './options.ts';
import type { SandboxRequest, SpawnPlan } from './types.ts';
import { findProgram } from './which.ts';

/** What the probe uses of a BubblewrapSandbox (by shape, so this file does not import bubblewrap.ts). */
export interface ProbedSandbox {
  readonly options: Pick<BubblewrapOptions, 'binary' | 'path'>;
  readonly pidMaxBound: boolean;
  plan(request: SandboxRequest): SpawnPlan;
  disablePidMax(): void;
}

const cache = new Map<string, string | null>();

const INSTALL = 'install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';
const OR_NONE =
  'or set tool_config.run_command.sandbox: none for this listener to run programs unconfined (not recommended)';

/** Why `sandbox` cannot run programs here, with how to fix it; null when it can. Cached. */
export function probeBubblewrap(sandbox: ProbedSandbox): string | null {
  const { binary, path } = sandbox.options;
  const key = `${binary}\0${path}\0${sandbox.pidMaxBound}`;
  if (cache.has(key)) return cache.get(key) ?? null;
  const reason = probe(sandbox);
  cache.set(key, reason);
  return reason;
}

function probe(sandbox: ProbedSandbox): string | null {
  const { binary, path } = sandbox.options;
  if (!findProgram(binary, path, '/').found) {
    return `bubblewrap is not installed (no ${binary} on ${binary.includes('/') ? 'disk' : 'PATH'}): ${INSTALL}, ${OR_NONE}`;
  }
  const helpers = sandbox.pidMaxBound ? ['prlimit', 'setpriv', 'unshare'] : ['prlimit'];
  for (const helper of helpers) {
    if (!findProgram(helper, path, '/').found) {
      return `${helper} (from util-linux) is not on PATH (${path}): install util-linux, ${OR_NONE}`;
    }
  }
  const dir = realpathSync(tmpdir());
  const plan = sandbox.plan({
    argv: ['true'],
    cwd: dir,
    workspace: dir,
    hide: [],
    envAllowlist: [],
    network: false,
    limits: {
      maxProcesses: SANDBOX_CONFIG_DEFAULTS.max_processes,
      maxMemoryMb: SANDBOX_CONFIG_DEFAULTS.max_memory_mb,
    },
  });
  const [program = binary, ...args] = plan.argv;
  const run = spawnSync(program, args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 10_000 });
  if (run.status === 0) return null;
  const said = (run.stderr || run.error?.message || `exit ${run.status ?? run.signal}`).trim().split('\n')[0];
  if (sandbox.pidMaxBound && /pid_max|ns_last_pid/.test(said ?? '')) {
    // A read-only /proc/sys: do without the pid_max bound rather than without run_command.
    sandbox.disablePidMax();
    return probe(sandbox);
  }
  if (/unknown option|unrecognized option/i.test(said ?? '')) {
    return `bubblewrap is too old (${said}): 0.7 or newer is needed (for --size); upgrade it, ${OR_NONE}`;
  }
  return (
    `bubblewrap cannot create its namespaces here (${said}): allow unprivileged user namespaces ` +
    '(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ also ' +
    'kernel.apparmor_restrict_unprivileged_userns=0), or in a container run it with a seccomp/AppArmor ' +
    `profile that permits them, ${OR_NONE}`
  );
}

/** Forgets the cached answers (tests that change the environment between probes). */
export function clearProbeCache(): void {
  cache.clear();
}
