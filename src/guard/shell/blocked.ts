/**
 * run_command's `blocked_commands`: program names that never run. A deny-list can only judge names
 * it can read. A command word built at run time (`x=touch; $x f`, `${t}ch`, `"$@"`, a glob, find's
 * `{}`, an alias) may be any program, blocked or not, so while the list is set such a command is
 * refused: the list fails closed. allowed_commands, which says what may run, is the control for
 * commands that must be judged whatever they are called.
 *
 * The guard (index.ts) and run_command itself (tools/run-command.ts) both apply this one rule.
 */
import { ShellParseError } from '../../errors.ts';
import { analyze, UNKNOWN } from './analyze.ts';
import type { Cmd } from './cmd.ts';
import { NO_ENV } from './paths.ts';
import { SHELLS, shellMode } from './wrappers.ts';

export const BLOCKED_RULE = 'shell.config.blocked_command';
export const UNJUDGEABLE_RULE = 'shell.config.blocked_unjudgeable';

export const UNJUDGEABLE_SUGGESTION =
  'Write the program name literally, or set allowed_commands to the programs this listener may run ' +
  '(a deny-list judges only names it can read).';

const INPUT_REDIRECT = new Set(['<', '<<', '<<-', '<<<', '<>']);

/** `blocked` as the guard compares them: basenames (`/usr/bin/curl` blocks `curl`). */
export function blockedNames(list: readonly string[]): Set<string> {
  return new Set(list.map((n) => n.slice(n.lastIndexOf('/') + 1)));
}

/** A shell (or `source /dev/stdin`) running whatever reaches its stdin. */
function readsScriptFromStdin(cmd: Cmd): boolean {
  if (SHELLS.has(cmd.name)) return shellMode(cmd.args).mode === 'stdin';
  return (cmd.name === 'source' || cmd.name === '.') && cmd.args[0] === '/dev/stdin';
}

/** The script file a shell, `source` or `.` runs, when it is one. */
function scriptFile(cmd: Cmd): string | undefined {
  if (cmd.name === 'source' || cmd.name === '.') return cmd.args[0];
  if (!SHELLS.has(cmd.name)) return undefined;
  const mode = shellMode(cmd.args);
  return mode.mode === 'file' ? cmd.args[mode.index] : undefined;
}

/** Why blocked_commands cannot judge `cmd`, or null when its name is as written. */
export function unjudgeable(cmd: Cmd): string | null {
  if (cmd.dynamicName) return `its name, ${cmd.argv0}, is made by an expansion when it runs`;
  if (cmd.globName)
    return `its name, ${cmd.argv0}, is a pattern (glob, braces or find's {}) filled in when it runs`;
  if (cmd.name === 'alias' && cmd.args.some((a) => a.includes('='))) {
    return 'alias gives a program another name, which then runs as a command';
  }
  if (cmd.name === 'hash' && cmd.args.some((a) => /^-[a-z]*p/.test(a))) {
    return 'hash -p gives a program another name, which then runs as a command';
  }
  const hasInput =
    cmd.stage > 0 || cmd.redirects.some((r) => INPUT_REDIRECT.has(r.op) && (r.fd === null || r.fd === '0'));
  if (readsScriptFromStdin(cmd) && hasInput && !cmd.stdinJudged) {
    return `${cmd.name} runs the text it reads, which is made when the line runs`;
  }
  if (scriptFile(cmd)?.includes(UNKNOWN)) return `${cmd.name} runs the output of a substitution as a script`;
  if (cmd.inlineUnjudged !== null) return `${cmd.name} ${cmd.inlineUnjudged}`;
  return null;
}

export interface BlockedRefusal {
  rule_id: typeof BLOCKED_RULE | typeof UNJUDGEABLE_RULE;
  /** The blocked program, when one is named. */
  program?: string;
  reason: string;
  segment: string;
}

/** The first command of `cmds` that blocked_commands refuses, and why; null when none. */
export function blockedRefusal(cmds: readonly Cmd[], blocked: ReadonlySet<string>): BlockedRefusal | null {
  if (blocked.size === 0) return null;
  for (const cmd of cmds) {
    if (blocked.has(cmd.name)) {
      return {
        rule_id: BLOCKED_RULE,
        program: cmd.name,
        reason: `${cmd.name} is in this tool's blocked_commands.`,
        segment: cmd.segment,
      };
    }
    const why = unjudgeable(cmd);
    if (why) {
      return {
        rule_id: UNJUDGEABLE_RULE,
        reason: `blocked_commands cannot judge the command ${JSON.stringify(cmd.segment)}: ${why}.`,
        segment: cmd.segment,
      };
    }
  }
  return null;
}

/**
 * The same rule for a whole command line, as run_command checks it before it starts anything;
 * `shell` says whether a shell runs it. A line the guard cannot parse is refused too.
 */
export function commandLineBlocked(
  command: string,
  blocked: readonly string[],
  shell: boolean,
): BlockedRefusal | null {
  const names = blockedNames(blocked);
  if (names.size === 0) return null;
  try {
    return blockedRefusal(analyze(command, { ...NO_ENV, expand: shell }).cmds, names);
  } catch (error) {
    if (!(error instanceof ShellParseError)) throw error;
    return {
      rule_id: UNJUDGEABLE_RULE,
      reason: `blocked_commands cannot judge a command line it cannot read (${error.message}).`,
      segment: command,
    };
  }
}
