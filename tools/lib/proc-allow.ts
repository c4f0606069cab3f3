/**
 * The `allowed_commands` rule of run_command: a list of program names (`git`) or argv prefixes
 * (`git status`, or `["git", "log"]`). A command runs only if its argv starts with one of them.
 */
import { CommandError } from '../../src/errors.ts';
import {
  commandLineBlocked,
  UNJUDGEABLE_RULE,
  UNJUDGEABLE_SUGGESTION,
} from '../../src/guard/shell/blocked.ts';

export type AllowedCommand = string | string[];

/** Normalises config entries into argv prefixes; throws command.bad_config on an unusable entry. */
export function compileAllowed(entries: readonly AllowedCommand[]): string[][] {
  return entries.map((entry, i) => {
    const prefix = typeof entry === 'string' ? entry.trim().split(/\s+/).filter(Boolean) : [...entry];
    if (prefix.length === 0 || prefix.some((p) => typeof p !== 'string' || p === '')) {
      throw new CommandError(
        'command.bad_config',
        `tool_config.allowed_commands[${i}] is empty; give a program name or an argv prefix such as "git status"`,
      );
    }
    return prefix;
  });
}

/**
 * True when argv begins with the prefix, word for word. The program is compared as written: an
 * entry `git` matches `git` (found on PATH) but not `./git` or `/tmp/git`, so a file the agent wrote
 * cannot pass as an allowed program.
 */
export function matchesPrefix(argv: readonly string[], prefix: readonly string[]): boolean {
  if (argv.length < prefix.length) return false;
  return prefix.every((word, i) => argv[i] === word);
}

/** Throws command.not_allowed naming the program and what is allowed. */
export function assertAllowed(argv: readonly string[], allowed: readonly string[][]): void {
  if (allowed.some((prefix) => matchesPrefix(argv, prefix))) return;
  const list = allowed.map((p) => `"${p.join(' ')}"`).join(', ');
  const shown = argv.slice(0, 3).join(' ') + (argv.length > 3 ? ' ...' : '');
  throw new CommandError(
    'command.not_allowed',
    `"${shown}" is not an allowed command here; this listener may run only commands starting with: ${list}`,
    { rule_id: 'run_command.allowed_commands', program: argv[0] },
  );
}

/**
 * `blocked_commands`: program names that never run, whatever path they are called by (`rm`,
 * `/bin/rm`) or wrapper they run behind; while the list is set, a command whose name is built at
 * run time (a variable, substitution, glob, alias...) is refused too, since no deny-list can judge
 * it. The shell guard judges them first by the same rule (src/guard/shell/blocked.ts); this is the
 * tool's own check of its command line.
 */
export function assertNotBlocked(command: string, blocked: readonly string[], shell: boolean): void {
  if (blocked.length === 0) return;
  const refused = commandLineBlocked(command, blocked, shell);
  if (!refused) return;
  const message =
    refused.rule_id === UNJUDGEABLE_RULE
      ? `${refused.reason} ${UNJUDGEABLE_SUGGESTION}`
      : `"${refused.program}" is in this listener's blocked_commands`;
  throw new CommandError('command.not_allowed', message, {
    rule_id: refused.rule_id,
    ...(refused.program === undefined ? {} : { program: refused.program }),
  });
}
