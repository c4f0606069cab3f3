/**
 * Runs one process for run_command: no shell unless the caller built `/bin/sh -c` argv itself,
 * its own process group (so a timeout kills grandchildren too), capped output, and no process left
 * behind: when the program exits, whatever it started in the background is killed with it.
 */
import { spawn } from 'node:child_process';
import { CommandError } from '../../src/errors.ts';
import { trimPartialUtf8 } from './fs-encoding.ts';

export interface ProcessOptions {
  /** Program and arguments; argv[0] is looked up on env.PATH. */
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Cap for stdout and for stderr, each. */
  maxOutputBytes: number;
  signal?: AbortSignal;
  /**
   * How long to wait for stdout/stderr to close after the program exits and its group is killed.
   * Only a process that left the group (setsid) can hold them longer; then we stop reading.
   */
  closeGraceMs?: number;
}

export interface ProcessOutcome {
  /** null when the process was ended by a signal. */
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  /** stdout or stderr went over the cap; the rest was read and dropped. */
  truncated: boolean;
  stdout_bytes: number;
  stderr_bytes: number;
}

/** Keeps the first `max` bytes of a stream and counts the rest. */
class Capture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.kept >= this.max) return;
    const room = this.max - this.kept;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }
  get truncated(): boolean {
    return this.total > this.max;
  }
  text(): string {
    const all = Buffer.concat(this.chunks);
    return (this.truncated ? trimPartialUtf8(all) : all).toString('utf8');
  }
}

/** The error a shell would report as exit code 127. */
export function notFound(program: string): CommandError {
  return new CommandError(
    'command.not_found',
    `command not found: "${program}" is not a program on PATH (exit code 127, as a shell would report)`,
    { program, exit_code: 127 },
  );
}

/** The error a shell would report as exit code 126. */
export function notExecutable(program: string): CommandError {
  return new CommandError(
    'command.not_executable',
    `permission denied: "${program}" cannot be executed (exit code 126, as a shell would report)`,
    { program, exit_code: 126 },
  );
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    // Negative pid: the whole process group the child leads (spawned with detached: true).
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
}

export function runProcess(opts: ProcessOptions): Promise<ProcessOutcome> {
  const [program, ...args] = opts.argv;
  if (program === undefined) return Promise.reject(new CommandError('command.syntax', 'command is empty'));
  const graceMs = opts.closeGraceMs ?? 2000;
  return new Promise<ProcessOutcome>((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(new CommandError('command.aborted', 'run_command was cancelled before the command started'));
      return;
    }
    const out = new Capture(opts.maxOutputBytes);
    const err = new Capture(opts.maxOutputBytes);
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;

    const child = spawn(program, args, {
      cwd: opts.cwd,
      env: opts.env,
      shell: false,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });

    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, opts.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup(child.pid);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    const cleanup = () => {
      settled = true;
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      opts.signal?.removeEventListener('abort', onAbort);
    };

    const finish = () => {
      if (settled) return;
      cleanup();
      if (aborted && !timedOut) {
        reject(
          new CommandError(
            'command.aborted',
            'run_command was cancelled (the call timed out or the organism is shutting down); ' +
              'the process group was killed',
          ),
        );
        return;
      }
      resolve({
        exit_code: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: out.text(),
        stderr: err.text(),
        timed_out: timedOut,
        truncated: out.truncated || err.truncated,
        stdout_bytes: out.total,
        stderr_bytes: err.total,
      });
    };

    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));

    child.on('error', (e: NodeJS.ErrnoException) => {
      if (settled) return;
      cleanup();
      killGroup(child.pid);
      if (e.code === 'ENOENT') {
        reject(notFound(program));
      } else if (e.code === 'EACCES') {
        reject(notExecutable(program));
      } else {
        reject(
          new CommandError('command.spawn', `could not start "${program}": ${e.code ?? e.message}`, {
            program,
          }),
        );
      }
    });

    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Background processes the program started die with it: nothing outlives the call.
      killGroup(child.pid);
      graceTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, graceMs);
    });

    child.on('close', (code, signal) => {
      exit ??= { code, signal };
      finish();
    });
  });
}
