/**
 * Privilege: changes that let a program, or whoever runs it next, act as root or another user
 * (setuid/setgid bits, file capabilities, permissions on system files, sudo given a password or
 * a loader to preload). Sudoers files are system files: write_system_file judges writes to them,
 * and user_change judges visudo and group changes.
 */
import type { Cmd } from '../cmd.ts';
import { flags, has, isSystemPath, type ShellRule } from '../match.ts';
import { normalizePath } from '../paths.ts';
import { outsideWorkspace, pathsOf } from '../places.ts';
import { basename } from '../words.ts';

/** A mode with the setuid or setgid bit: `4755`, `2755`, `u+s`, `+s`, `u=rwxs`, `g+xs`. */
export function setsId(mode: string): boolean {
  return /^0?[2-7][0-7]{3}$/.test(mode) || /(^|,)[ugoa]*[+=][rwxXt]*s/.test(mode);
}

/** Programs that hand out a shell or run code: a setuid copy of one is root for anyone. */
const GIVES_SHELL =
  /^((ba|z|da|k|mk|c|tc|fi|a|y)?sh|python[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|php[0-9.]*|lua[0-9.]*|env|find|vim?|nvim|less|more|awk|gawk|busybox|tar|cp|dd|tee|bash[0-9.]*|nmap|socat|nc|ncat|gdb|strace|docker|rsync|zip|git)$/;

/**
 * The file would give its powers to a program outside the workspace, to a shell or interpreter, or
 * to a file named only at run time (`$(which bash)`).
 */
function privileged(c: Cmd, raw: string): boolean {
  if (raw.startsWith('$')) return true;
  return pathsOf(c, raw).some((p) => GIVES_SHELL.test(basename(p)) || outsideWorkspace(c, p, true));
}

/** install's mode (`-m 4755`, `-m4755`, `--mode=4755`) and destination. */
function installMode(c: Cmd): { mode: string | null; dest: string | null } {
  let mode: string | null = null;
  const rest: string[] = [];
  for (let i = 0; i < c.args.length; i++) {
    const a = c.args[i]!;
    if (a === '-m' || a === '--mode') mode = c.args[++i] ?? null;
    else if (a.startsWith('--mode=')) mode = a.slice(7);
    else if (/^-m./.test(a)) mode = a.slice(2);
    else if (/^-[ogtS]$/.test(a) || /^--(owner|group|target-directory|suffix)$/.test(a)) i++;
    else if (!a.startsWith('-')) rest.push(a);
  }
  return { mode, dest: rest.length > 1 ? rest[rest.length - 1]! : null };
}

const PRELOADS =
  /^(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|BASH_ENV|ENV|PYTHONPATH|PYTHONSTARTUP|PERL5LIB|PERL5OPT|RUBYLIB|RUBYOPT|NODE_OPTIONS|GCONV_PATH)$/;

/** What is wrong with the sudo (doas, pkexec...) this command runs under, or null. */
function sudoAbuse(c: Cmd): boolean {
  const words = c.elevation ?? (c.name === 'sudo' ? [c.name, ...c.args] : null);
  if (words === null) return false;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    // A password fed on stdin: the secret is in the command line or a file the agent read.
    if (w === '--stdin' || /^-[A-Za-z]*S/.test(w)) return true;
    // -u#-1: the user id sudo's CVE-2019-14287 turns into root.
    if (/#(-1|4294967295)$/.test(w)) return true;
    const eq = w.indexOf('=');
    if (eq > 0 && PRELOADS.test(w.slice(0, eq))) return true;
    if (
      w.startsWith('--preserve-env=') &&
      w
        .slice(15)
        .split(',')
        .some((v) => PRELOADS.test(v))
    )
      return true;
  }
  return false;
}

export const PRIVILEGE_RULES: ShellRule[] = [
  {
    id: 'shell.privilege.setuid',
    severity: 'destructive',
    commands: ['chmod', 'install'],
    reason:
      'Sets the setuid or setgid bit on a system program, a shell or interpreter, or a file outside the workspace: whoever runs it gets its owner’s rights.',
    suggestion: 'Do not grant setuid; run the program with the rights it needs.',
    match: (c) => {
      if (c.name === 'install') {
        const { mode, dest } = installMode(c);
        return mode !== null && dest !== null && setsId(mode) && privileged(c, dest);
      }
      const p = flags(c).positionals;
      return p.length > 1 && setsId(p[0]!) && p.slice(1).some((f) => privileged(c, f));
    },
  },
  {
    id: 'shell.privilege.capabilities',
    severity: 'destructive',
    commands: ['setcap'],
    reason:
      'Gives a program file capabilities (cap_setuid, cap_dac_read_search...): root powers without being root.',
    suggestion: 'Leave capabilities to an operator; getcap lists them.',
    match: (c) => !has(c, 'rv', '--help'),
  },
  {
    id: 'shell.privilege.system_permissions',
    severity: 'destructive',
    commands: ['chmod', 'chown', 'chgrp', 'setfacl', 'chattr'],
    reason:
      'Changes the owner, permissions, ACL or attributes of a system file (/etc, /usr, /bin...), such as /etc/passwd or sudoers.',
    suggestion: 'Change permissions only on files in the workspace; system files are an operator’s.',
    match: (c) =>
      flags(c)
        .positionals.slice(c.name === 'setfacl' || c.name === 'chattr' ? 0 : 1)
        .some((p) => p.startsWith('/') && isSystemPath(normalizePath(p, null))),
  },
  {
    id: 'shell.privilege.sudo',
    severity: 'destructive',
    commands: ['sudo'],
    also: { elevated: true },
    reason:
      'Runs sudo with a password fed on stdin (-S), an impossible user id (-u#-1), or a preloaded library or interpreter path passed in.',
    suggestion: 'Run the one command that needs privileges with plain sudo, or ask an operator.',
    match: sudoAbuse,
  },
];
