/**
 * run_command: runs one program in the workspace and returns its exit code and output. No shell
 * unless tool_config says `shell: true`; an OS sandbox (bubblewrap, src/sandbox/) unless it says
 * `sandbox: none`, in which the program sees only the workspace and the machine's read-only root,
 * and which dies whole when the call ends; an allowlisted environment; optional `allowed_commands`.
 * The shell guard judges `command` first.
 */
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CommandError, FileToolError, SandboxError } from '../src/errors.ts';
import {
  findProgram,
  SANDBOX_CONFIG_DEFAULTS,
  SANDBOX_KINDS,
  type SandboxKind,
  sandboxFor,
} from '../src/sandbox/index.ts';
import type { ToolConfig, ToolDefinition, ToolRunContext } from '../src/tools/types.ts';
import { resolveWorkspaceDir } from './lib/fs-confine.ts';
import { type AllowedCommand, assertAllowed, assertNotBlocked, compileAllowed } from './lib/proc-allow.ts';
import { parseArgv, splitCommandList } from './lib/proc-argv.ts';
import { checkEnvAllowlist } from './lib/proc-env.ts';
import { notExecutable, notFound, runProcess } from './lib/proc-spawn.ts';

export interface RunCommandArgs {
  command: string;
  cwd?: string;
  timeout_ms?: number;
}

export interface RunCommandResult {
  /** null when the process was ended by a signal (always so when timed_out). */
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  truncated: boolean;
  /** Full sizes, present when truncated. */
  stdout_bytes?: number;
  stderr_bytes?: number;
}

/** run_command's own tool_config keys, defaults applied. */
export interface RunCommandOptions {
  shell: boolean;
  timeoutMs: number;
  maxOutputBytes: number;
  envAllowlist: string[];
  allowedCommands: string[][] | undefined;
  blockedCommands: string[];
  sandbox: SandboxKind;
  network: boolean;
  maxProcesses: number;
  maxMemoryMb: number;
}

export const RUN_COMMAND_DEFAULTS = {
  shell: false,
  timeout_ms: 30_000,
  max_output_bytes: 64 * 1024,
  ...SANDBOX_CONFIG_DEFAULTS,
} as const;

const MAX_COMMAND_LENGTH = 16_384;

/** Reads and checks tool_config; throws command.bad_config naming the key. */
export function runCommandOptions(config: ToolConfig): RunCommandOptions {
  const bad = (key: string, what: string) =>
    new CommandError('command.bad_config', `tool_config.${key} ${what}`);
  const shell = config.shell ?? RUN_COMMAND_DEFAULTS.shell;
  if (typeof shell !== 'boolean') throw bad('shell', 'must be true or false');
  const timeoutMs = config.timeout_ms ?? RUN_COMMAND_DEFAULTS.timeout_ms;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw bad('timeout_ms', 'must be a positive integer');
  const maxOutputBytes = config.max_output_bytes ?? RUN_COMMAND_DEFAULTS.max_output_bytes;
  if (!Number.isInteger(maxOutputBytes) || (maxOutputBytes as number) < 1) {
    throw bad('max_output_bytes', 'must be a positive integer');
  }
  const envList = config.env_allowlist ?? [];
  if (!Array.isArray(envList)) throw bad('env_allowlist', 'must be a list of environment variable names');
  const allowed = config.allowed_commands;
  if (allowed !== undefined && !Array.isArray(allowed)) {
    throw bad('allowed_commands', 'must be a list of program names or argv prefixes');
  }
  const blocked = config.blocked_commands ?? [];
  if (!Array.isArray(blocked) || blocked.some((b) => typeof b !== 'string' || b === '')) {
    throw bad('blocked_commands', 'must be a list of program names');
  }
  const sandbox = config.sandbox ?? RUN_COMMAND_DEFAULTS.sandbox;
  if (!SANDBOX_KINDS.includes(sandbox as SandboxKind)) {
    throw bad('sandbox', `must be one of ${SANDBOX_KINDS.join(', ')}`);
  }
  const network = config.network ?? RUN_COMMAND_DEFAULTS.network;
  if (typeof network !== 'boolean') throw bad('network', 'must be true or false');
  const maxProcesses = config.max_processes ?? RUN_COMMAND_DEFAULTS.max_processes;
  if (!Number.isInteger(maxProcesses) || (maxProcesses as number) < 1) {
    throw bad('max_processes', 'must be a positive integer');
  }
  const maxMemoryMb = config.max_memory_mb ?? RUN_COMMAND_DEFAULTS.max_memory_mb;
  if (!Number.isInteger(maxMemoryMb) || (maxMemoryMb as number) < 16) {
    throw bad('max_memory_mb', 'must be an integer of at least 16');
  }
  return {
    sandbox: sandbox as SandboxKind,
    network,
    maxProcesses: maxProcesses as number,
    maxMemoryMb: maxMemoryMb as number,
    blockedCommands: blocked as string[],
    shell,
    timeoutMs,
    maxOutputBytes: maxOutputBytes as number,
    envAllowlist: checkEnvAllowlist(envList),
    allowedCommands: allowed === undefined ? undefined : compileAllowed(allowed as AllowedCommand[]),
  };
}

/**
 * tool_config.timeout_ms is also the runtime's limit for the whole call. Killing at that same moment
 * would race the runtime's own timeout, which answers with a bare error and loses the output; so the
 * command is killed a little earlier (10%, at most 1 s) and the caller gets timed_out with the output.
 */
export function ownTimeout(configured: number): number {
  return Math.max(1, configured - Math.min(1000, Math.floor(configured / 10)));
}

async function workingDir(ctx: ToolRunContext, cwd: string | undefined): Promise<string> {
  if (cwd !== undefined && typeof cwd !== 'string') {
    throw new CommandError('command.bad_argument', 'cwd must be a path relative to the workspace');
  }
  try {
    const dir = await resolveWorkspaceDir(ctx.workspace, cwd);
    if (!(await stat(dir)).isDirectory()) {
      throw new CommandError('command.bad_cwd', `cwd ${JSON.stringify(cwd)} is a file, not a directory`);
    }
    return dir;
  } catch (error) {
    if (error instanceof FileToolError) {
      throw new CommandError('command.bad_cwd', `cwd: ${error.message}`, error.details);
    }
    throw error;
  }
}

/**
 * What a program must not see although it is on the machine's disk: the organism's data dir (kv,
 * librarian, audit, history, keys), the config's folder with organism.yaml and its .env, the tools
 * manifest and revocations, and the audit log and its key file wherever they were put.
 */
export function hiddenPaths(ctx: ToolRunContext): string[] {
  const config = ctx.services.config as Partial<typeof ctx.services.config>;
  const paths = [ctx.dataDir];
  if (config.organism?.data_dir) paths.push(config.organism.data_dir);
  if (config.file) paths.push(dirname(config.file), config.file, join(dirname(config.file), '.env'));
  for (const section of [config.tools, config.audit] as unknown[]) {
    if (typeof section !== 'object' || section === null) continue;
    for (const [key, value] of Object.entries(section)) {
      if (typeof value === 'string' && /(^|_)(path|file|manifest)$/.test(key)) paths.push(value);
    }
  }
  return paths;
}

const UNSANDBOXED =
  'runs programs without a sandbox (tool_config.run_command.sandbox: none): they can read what the ' +
  'daemon can, its environment (/proc/<pid>/environ), data dir and config included';

const tool: ToolDefinition<RunCommandArgs, RunCommandResult> = {
  name: 'run_command',
  description:
    'Run one program in the workspace and get back its exit code, stdout and stderr. The command is split ' +
    'into words like a shell would (quotes work), but it is NOT run by a shell unless this listener is ' +
    'configured for it: pipes, &&, ;, redirection and $(...) are refused, and $VAR and *.txt are passed ' +
    'literally. Runs in the workspace (or `cwd`, a folder inside it), in a sandbox where the workspace is the ' +
    'only writable folder, with a reduced environment and, unless configured, no network. Everything it ' +
    'started is killed when it exits or after the timeout (timed_out: true). Output over the size limit is ' +
    'cut (truncated: true). A non-zero exit_code is a normal result; read stderr to see why.',
  args: {
    type: 'object',
    additionalProperties: false,
    required: ['command'],
    properties: {
      command: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_COMMAND_LENGTH,
        description: 'The command line, e.g. `git status --short` or `ls -la "my folder"`.',
      },
      cwd: {
        type: 'string',
        description: 'Working directory relative to the workspace; default the workspace itself.',
      },
      timeout_ms: {
        type: 'integer',
        minimum: 1,
        description:
          'Kill the command after this many milliseconds (at most the configured timeout, 30 s by default).',
      },
    },
  },
  readOnly: false,
  capability: 'exec_shell',
  source: 'native',
  guard: 'shell',
  sideEffect: true,
  config: {
    type: 'object',
    properties: {
      shell: {
        type: 'boolean',
        default: false,
        description: 'Run the command with /bin/sh -c, so pipes, && and redirection work. Less contained.',
      },
      sandbox: {
        enum: [...SANDBOX_KINDS],
        default: SANDBOX_CONFIG_DEFAULTS.sandbox,
        description:
          'bubblewrap: the program sees the workspace (the only writable folder) and the read-only root, ' +
          'never the data dir, config, keys or other processes. none: no OS boundary at all; warned about at start.',
      },
      network: {
        type: 'boolean',
        default: SANDBOX_CONFIG_DEFAULTS.network,
        description: 'Let sandboxed programs open network connections (off: own empty network namespace).',
      },
      max_processes: {
        type: 'integer',
        minimum: 1,
        default: SANDBOX_CONFIG_DEFAULTS.max_processes,
        description:
          'Processes a sandboxed program may have at once (RLIMIT_NPROC; as root on Linux 6.14+, the pid_max of its PID namespace).',
      },
      max_memory_mb: {
        type: 'integer',
        minimum: 16,
        default: SANDBOX_CONFIG_DEFAULTS.max_memory_mb,
        description: 'Memory per sandboxed process (RLIMIT_DATA), and the size of its private /tmp, in MiB.',
      },
      max_output_bytes: {
        type: 'integer',
        minimum: 1,
        default: RUN_COMMAND_DEFAULTS.max_output_bytes,
        description: 'Cap for stdout and for stderr, each; the rest is dropped and truncated is set.',
      },
      env_allowlist: {
        type: 'array',
        items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
        description:
          'Environment variables passed to the command besides the PATH, HOME and LANG the sandbox sets ' +
          "(with sandbox: none, the daemon's PATH, HOME, LANG, LC_ALL, TZ, TERM). Names containing SECRET, " +
          'PASSWORD, TOKEN, KEY or CREDENTIAL are refused by organism validate and at start.',
      },
      blocked_commands: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        description:
          'Program names that never run here (judged by the shell guard, and checked again by the tool); while set, a command whose name is built at run time ($x, a glob, an alias) is refused too.',
      },
      allowed_commands: {
        type: 'array',
        items: {
          anyOf: [
            { type: 'string', minLength: 1 },
            { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
          ],
        },
        description:
          'When set, only commands whose words start with one of these run: a program name ("git"), ' +
          'or an argv prefix ("git status" or ["git", "log"]).',
      },
    },
  },
  unavailable(_services, config) {
    if (process.platform === 'win32') return 'run_command needs a POSIX system (process groups, /bin/sh)';
    const kind = config?.sandbox ?? SANDBOX_CONFIG_DEFAULTS.sandbox;
    return kind === 'none' ? null : sandboxFor('bubblewrap').unavailable();
  },
  notice(config) {
    return config.sandbox === 'none' ? UNSANDBOXED : null;
  },
  async run(args, ctx) {
    const opts = runCommandOptions(ctx.config);
    const command = args.command;
    if (typeof command !== 'string' || command.trim() === '') {
      throw new CommandError('command.bad_argument', 'command is empty: give a program to run');
    }
    if (command.length > MAX_COMMAND_LENGTH) {
      throw new CommandError(
        'command.bad_argument',
        `command is longer than ${MAX_COMMAND_LENGTH} characters`,
      );
    }
    if (command.includes('\0')) throw new CommandError('command.bad_argument', 'command contains a NUL byte');
    if (args.timeout_ms !== undefined && (!Number.isInteger(args.timeout_ms) || args.timeout_ms < 1)) {
      throw new CommandError(
        'command.bad_argument',
        'timeout_ms must be a positive whole number of milliseconds',
      );
    }
    const timeoutMs = Math.min(args.timeout_ms ?? opts.timeoutMs, ownTimeout(opts.timeoutMs));

    let argv: string[];
    if (opts.shell) {
      assertNotBlocked(command, opts.blockedCommands, true);
      if (opts.allowedCommands) {
        for (const simple of splitCommandList(command)) assertAllowed(simple, opts.allowedCommands);
      }
      argv = ['/bin/sh', '-c', command];
    } else {
      argv = parseArgv(command);
      assertNotBlocked(command, opts.blockedCommands, false);
      if (opts.allowedCommands) assertAllowed(argv, opts.allowedCommands);
    }

    const sandbox = sandboxFor(opts.sandbox);
    const why = sandbox.unavailable();
    if (why) throw new SandboxError('sandbox.unavailable', `run_command is unavailable: ${why}`);
    const cwd = await workingDir(ctx, args.cwd);
    const plan = sandbox.plan({
      argv,
      cwd,
      workspace: ctx.workspace,
      hide: hiddenPaths(ctx),
      envAllowlist: opts.envAllowlist,
      network: opts.network,
      limits: { maxProcesses: opts.maxProcesses, maxMemoryMb: opts.maxMemoryMb },
    });
    if (sandbox.kind !== 'none') {
      // Inside, a missing program is only an exit code 127; say it as the unsandboxed spawn would.
      const [program = ''] = argv;
      const found = findProgram(program, plan.env.PATH ?? '', cwd);
      if (!found.found) throw found.reason === 'missing' ? notFound(program) : notExecutable(program);
    }
    const outcome = await runProcess({
      argv: plan.argv,
      cwd: plan.cwd,
      env: plan.env,
      timeoutMs,
      maxOutputBytes: opts.maxOutputBytes,
      signal: ctx.signal,
    });
    const result: RunCommandResult = {
      exit_code: outcome.exit_code,
      signal: outcome.signal,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      timed_out: outcome.timed_out,
      truncated: outcome.truncated,
    };
    if (outcome.truncated) {
      result.stdout_bytes = outcome.stdout_bytes;
      result.stderr_bytes = outcome.stderr_bytes;
    }
    return result;
  },
};

export default tool;
