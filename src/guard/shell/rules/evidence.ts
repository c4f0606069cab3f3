/**
 * Evidence: wiping what records what happened, outside the workspace (system logs, the journal,
 * the audit subsystem, shell and REPL histories). A log in the workspace is the project's to clean.
 */
import type { Cmd } from '../cmd.ts';
import type { ShellRule } from '../match.ts';
import { CHANGERS, changes, outsideWorkspace, placeOf } from '../places.ts';
import { basename } from '../words.ts';

const LOG_PATH =
  /^\/(private\/)?(var\/(log|adm|audit|run\/utmp)|run\/(utmp|log)|Library\/Logs)(\/|$)|^~\/Library\/Logs(\/|$)/;
const HISTORY_FILE =
  /^(\.(bash|zsh|sh|ksh|mksh|python|node_repl|mysql|psql|sqlite|rediscli|irb|pry|php|mongo|dbshell|lesshst|scala)_history|\.(zhistory|histfile|history|lesshst|viminfo|wget-hsts)|fish_history|ConsoleHost_history\.txt)$/;

/** Paths this command empties, overwrites, links over or deletes (appending is not wiping). */
function wiped(c: Cmd): string[] {
  const all = changes(c);
  if (all.length === 0) return NOTHING;
  const out: string[] = [];
  for (const ch of all) if (ch.kind === 'overwrite' || ch.kind === 'delete') out.push(ch.path);
  return out;
}
const NOTHING: string[] = [];

export const EVIDENCE_RULES: ShellRule[] = [
  {
    id: 'shell.evidence.logs',
    severity: 'destructive',
    commands: ['journalctl', 'auditctl', ...CHANGERS],
    also: { redirects: true },
    reason:
      'Empties, edits or deletes system logs, the journal or the audit trail: the record of what happened on the machine.',
    suggestion: 'Leave system logs alone; read them (tail, grep, journalctl -u) if you need what they say.',
    match: (c) => {
      if (c.name === 'journalctl') return c.args.some((a) => a.startsWith('--vacuum-') || a === '--rotate');
      if (c.name === 'auditctl')
        return c.args.includes('-D') || c.args.some((a, i) => a === '-e' && c.args[i + 1] === '0');
      return wiped(c).some((p) => !p.startsWith('$') && LOG_PATH.test(placeOf(c, p)));
    },
  },
  {
    id: 'shell.evidence.history',
    severity: 'destructive',
    commands: [...CHANGERS],
    also: { redirects: true },
    reason: 'Empties or deletes a shell or REPL history file outside the workspace, hiding what was run.',
    suggestion: 'Leave the history files alone.',
    match: (c) =>
      wiped(c).some(
        (p) =>
          /^\$\{?HISTFILE\}?$/.test(p) || (HISTORY_FILE.test(basename(p)) && outsideWorkspace(c, p, true)),
      ),
  },
];
