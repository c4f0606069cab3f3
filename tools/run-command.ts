/**
 * run_command: runs one program in the workspace and returns its exit code and output. No shell
 * unless tool_config says `shell: true`; its own process group, killed whole on timeout; an
 * allowlisted environment; optional `allowed_commands`. The shell guard judges `command` first.
 */
import { stat } from 'node:fs/promises';
import { CommandError, FileToolError } from '../src/errors.ts';
import type { ToolConfig, ToolDefinition, ToolRunContext } from '../src/tools/types.ts';
import { resolveWorkspaceDir } from './lib/fs-confine.ts';
import { type AllowedCommand, assertAllowed, assertNotBlocked, compileAllowed } from './lib/proc-allow.ts';
import { parseArgv, splitCommandList } from './lib/proc-argv.ts';
import { buildChildEnv, checkEnvAllowlist } from './lib/proc-env.ts';
import { runProcess } from './lib/proc-spawn.ts';

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
}

export const RUN_COMMAND_DEFAULTS = {
  shell: false,
  timeout_ms: 30_000,
  max_output_bytes: 64 * 1024,
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
  return {
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

const tool: ToolDefinition<RunCommandArgs, RunCommandResult> = {
  name: 'run_command',
  description:
    'Run one program in the workspace and get back its exit code, stdout and stderr. The command is split ' +
    'into words like a shell would (quotes work), but it is NOT run by a shell unless this listener is ' +
    'configured for it: pipes, &&, ;, redirection and $(...) are refused, and $VAR and *.txt are passed ' +
    'literally. Runs in the workspace (or `cwd`, a folder inside it), with a reduced environment, and is ' +
    'killed with everything it started after the timeout (timed_out: true). Output over the size limit is ' +
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
          'Environment variables passed to the command besides PATH, HOME, LANG, LC_ALL, TZ, TERM. ' +
          'Names that look like credentials are refused.',
      },
      blocked_commands: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        description:
          'Program names that never run here (judged by the shell guard, and checked again by the tool).',
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
  unavailable() {
    return process.platform === 'win32' ? 'run_command needs a POSIX system (process groups, /bin/sh)' : null;
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
      if (opts.allowedCommands) {
        for (const simple of splitCommandList(command)) assertAllowed(simple, opts.allowedCommands);
      }
      argv = ['/bin/sh', '-c', command];
    } else {
      argv = parseArgv(command);
      assertNotBlocked(argv, opts.blockedCommands);
      if (opts.allowedCommands) assertAllowed(argv, opts.allowedCommands);
    }

    const outcome = await runProcess({
      argv,
      cwd: await workingDir(ctx, args.cwd),
      env: buildChildEnv(opts.envAllowlist),
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
