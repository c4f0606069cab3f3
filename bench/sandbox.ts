/**
 * run_command_sandbox_overhead_ms_p50: what the bubblewrap sandbox adds to starting a program.
 * `true` is spawned through run_command's own spawn path (tools/lib/proc-spawn.ts) twice per round,
 * once directly (the floor) and once in the sandbox run_command would use, with an organism's data
 * dir, config folder and workspace laid out as `organism init` does; rounds interleave the two so
 * both see the same machine. The figure is the p50 of the per-round difference. Target: <= 15 ms.
 * Printed, never asserted.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BubblewrapSandbox, hostEnv, SANDBOX_CONFIG_DEFAULTS } from '../src/sandbox/index.ts';
import { runProcess } from '../tools/lib/proc-spawn.ts';
import { percentile, round } from './support.ts';

const WARMUP = 10;
const ROUNDS = 200;
const ms = (value: number) => round(value, 2);

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const sandbox = new BubblewrapSandbox();
  const why = sandbox.unavailable();
  if (why) {
    yield { bench: 'sandbox', skipped: why };
    return;
  }
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'organism-bench-sandbox-')));
  try {
    const dataDir = join(dir, '.organism');
    const ws = join(dataDir, 'workspace');
    await mkdir(ws, { recursive: true });
    await writeFile(join(dir, 'organism.yaml'), 'organism:\n  name: bench\n');
    await writeFile(join(dir, '.env'), 'X=1\n');
    const plan = () =>
      sandbox.plan({
        argv: ['true'],
        cwd: ws,
        workspace: ws,
        hide: [dataDir, dir, join(dir, 'organism.yaml'), join(dir, '.env')],
        envAllowlist: [],
        network: false,
        limits: {
          maxProcesses: SANDBOX_CONFIG_DEFAULTS.max_processes,
          maxMemoryMb: SANDBOX_CONFIG_DEFAULTS.max_memory_mb,
        },
      });
    const spawnOnce = async (argv: string[], env: NodeJS.ProcessEnv): Promise<number> => {
      const start = performance.now();
      const outcome = await runProcess({ argv, cwd: ws, env, timeoutMs: 10_000, maxOutputBytes: 4096 });
      const elapsed = performance.now() - start;
      if (outcome.exit_code !== 0) throw new Error(`${argv.join(' ')} failed: ${outcome.stderr}`);
      return elapsed;
    };
    const direct: number[] = [];
    const sandboxed: number[] = [];
    const difference: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const bare = await spawnOnce(['true'], hostEnv([]));
      // The plan is part of the cost: run_command builds one per call.
      const start = performance.now();
      const p = plan();
      const planned = performance.now() - start;
      const boxed = planned + (await spawnOnce(p.argv, p.env));
      if (i < WARMUP) continue;
      direct.push(bare);
      sandboxed.push(boxed);
      difference.push(boxed - bare);
    }
    for (const list of [direct, sandboxed, difference]) list.sort((a, b) => a - b);
    yield {
      bench: 'sandbox',
      run_command_sandbox_overhead_ms_p50: ms(percentile(difference, 50)),
      run_command_sandbox_overhead_ms_p99: ms(percentile(difference, 99)),
      sandboxed_true_ms_p50: ms(percentile(sandboxed, 50)),
      floor_direct_true_ms_p50: ms(percentile(direct, 50)),
      rounds: ROUNDS,
      target_p50_ms: 15,
      pid_namespace_pid_max: sandbox.pidMaxBound,
      includes:
        'plan (real paths of covers), bwrap: user/pid/ipc/uts/cgroup/net namespaces, ro root, /proc (keyrings covered, /proc/sys read-only), ' +
        'ro /dev with a /dev/shm tmpfs, /sys with only the CPUs, tmpfs, one-page covers' +
        (sandbox.pidMaxBound
          ? '; setpriv + unshare (with its own /proc) + sh for the outer PID namespace with pid_max, its PIDs from 300, and RLIMIT_DATA'
          : '; prlimit inside'),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
