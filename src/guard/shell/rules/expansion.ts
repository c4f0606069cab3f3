/**
 * Destructive arguments behind an expansion: `$X -rf /`. The command word is known only at run
 * time, so no rule of its own can judge it; the arguments alone say what it would do to rm, dd or
 * mkfs, and that is enough to refuse it. Harmless arguments stay obfuscation.dynamic_command's
 * warning.
 */
import type { Cmd } from '../cmd.ts';
import { flags, isDevice, type ShellRule, targets } from '../match.ts';

/**
 * `-r` (`-R`, `--recursive`) on /, a system or home folder or `.`; with `-f` (`--force`) too, rm's
 * signature, on any absolute or unknown path. `-r` alone is many tools' option (`pip install -r`,
 * `vim -R`), so an ordinary path after it stays a warning.
 */
function destructiveArgs(c: Cmd): boolean {
  const f = flags(c);
  if (f.long.has('--no-preserve-root')) return true;
  if (c.args.some((a) => (a.startsWith('of=') && isDevice(a.slice(3))) || isDevice(a))) return true;
  if (!(f.short.has('r') || f.short.has('R') || f.long.has('--recursive'))) return false;
  if (targets(c, 'root', 'system', 'home', 'cwd')) return true;
  return (f.short.has('f') || f.long.has('--force')) && targets(c, 'absolute', 'dynamic');
}

export const EXPANSION_RULES: ShellRule[] = [
  {
    id: 'shell.expansion.destructive',
    severity: 'destructive',
    also: { dynamic: true },
    reason:
      'The command is built at run time (a variable, substitution or glob) and its arguments are destructive (-r on /, a system or home folder or .; -rf on an absolute or unknown path; --no-preserve-root; a disk device).',
    suggestion:
      'Name the command literally, so it can be judged, and target only paths inside the workspace.',
    match: (c) => (c.dynamicName || c.globName) && destructiveArgs(c),
  },
];
