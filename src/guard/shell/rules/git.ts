/** Git: history rewrites and discards that lose work, here or on the remote. */
import type { Cmd } from '../cmd.ts';
import { type Flags, parseFlags, type ShellRule } from '../match.ts';

/** Global options that take the next word (`git -C repo`, `git -c k=v`). */
const GLOBAL_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--config-env',
  '--super-prefix',
  '--exec-path',
  '--list-cmds',
]);

export interface GitCall {
  sub: string;
  args: string[];
  flags: Flags;
}

const cache = new WeakMap<Cmd, GitCall | null>();

/** The subcommand and its arguments, past git's global options. */
export function gitCall(c: Cmd): GitCall | null {
  if (cache.has(c)) return cache.get(c)!;
  let call: GitCall | null = null;
  for (let i = 0; i < c.args.length; i++) {
    const a = c.args[i]!;
    if (a.startsWith('-')) {
      if (!a.includes('=') && GLOBAL_WITH_VALUE.has(a) && a !== '--exec-path') i++;
      continue;
    }
    const args = c.args.slice(i + 1);
    call = { sub: a, args, flags: parseFlags(args) };
    break;
  }
  cache.set(c, call);
  return call;
}

function git(sub: string | string[], test: (args: string[], f: Flags) => boolean) {
  const subs = Array.isArray(sub) ? sub : [sub];
  return (c: Cmd) => {
    const call = gitCall(c);
    return call !== null && subs.includes(call.sub) && test(call.args, call.flags);
  };
}

const G = ['git'];

export const GIT_RULES: ShellRule[] = [
  {
    id: 'shell.git.push_force',
    severity: 'destructive',
    commands: G,
    reason: 'Force push overwrites the remote branch’s history; others’ commits can be lost.',
    suggestion:
      'Push normally; if history must change, use --force-with-lease on your own branch after agreeing with its users.',
    match: git(
      'push',
      (args, f) =>
        f.short.has('f') ||
        f.long.has('--force') ||
        f.long.has('--mirror') ||
        args.some((a) => a.startsWith('+') && a.length > 1),
    ),
  },
  {
    id: 'shell.git.push_delete',
    severity: 'destructive',
    commands: G,
    reason: 'Deletes a branch or tag on the remote.',
    suggestion:
      'Leave remote branches to their owners, or delete them through the hosting service’s review flow.',
    match: git(
      'push',
      (args, f) =>
        f.short.has('d') ||
        f.long.has('--delete') ||
        f.long.has('--prune') ||
        args.some((a) => /^:[^:]/.test(a)),
    ),
  },
  {
    id: 'shell.git.reset_hard',
    severity: 'destructive',
    commands: G,
    reason: 'git reset --hard discards all uncommitted changes in the working tree.',
    suggestion: 'Use git stash to set changes aside, or git reset --soft / --mixed to keep them.',
    match: git('reset', (_a, f) => f.long.has('--hard') || f.long.has('--merge')),
  },
  {
    id: 'shell.git.clean_force',
    severity: 'destructive',
    commands: G,
    reason: 'git clean -f permanently deletes untracked files (with -x, ignored ones too).',
    suggestion: 'Run git clean -n first to see what would go, then remove specific files.',
    match: git(
      'clean',
      (_a, f) => (f.short.has('f') || f.long.has('--force')) && !f.short.has('n') && !f.long.has('--dry-run'),
    ),
  },
  {
    id: 'shell.git.branch_force_delete',
    severity: 'destructive',
    commands: G,
    reason: 'git branch -D deletes a branch even when its commits are merged nowhere.',
    suggestion: 'Use git branch -d, which refuses to delete unmerged work.',
    match: git(
      'branch',
      (_a, f) =>
        f.short.has('D') ||
        ((f.short.has('d') || f.long.has('--delete')) && (f.short.has('f') || f.long.has('--force'))),
    ),
  },
  {
    id: 'shell.git.checkout_discard',
    severity: 'destructive',
    commands: G,
    reason: 'Overwrites working-tree files, discarding their uncommitted changes.',
    suggestion: 'Commit or stash changes first (git stash), then check files out.',
    match: (c) => {
      const call = gitCall(c);
      if (!call) return false;
      const f = call.flags;
      if (call.sub === 'checkout') {
        if (f.short.has('f') || f.long.has('--force')) return true;
        const dd = call.args.indexOf('--');
        return (dd >= 0 && dd < call.args.length - 1) || f.positionals.includes('.');
      }
      if (call.sub === 'restore') {
        const stagedOnly =
          (f.short.has('S') || f.long.has('--staged')) && !(f.short.has('W') || f.long.has('--worktree'));
        return !stagedOnly && f.positionals.length > 0;
      }
      if (call.sub === 'switch')
        return f.short.has('f') || f.long.has('--force') || f.long.has('--discard-changes');
      return false;
    },
  },
  {
    id: 'shell.git.history_rewrite',
    severity: 'destructive',
    commands: G,
    reason: 'Rewrites the whole history of the repository (filter-branch / filter-repo).',
    suggestion: 'Work on a fresh clone, and agree with the repository’s users before rewriting history.',
    match: git(['filter-branch', 'filter-repo'], () => true),
  },
  {
    id: 'shell.git.stash_drop',
    severity: 'risky',
    commands: G,
    reason: 'Drops stashed changes; they are hard to get back.',
    suggestion: 'Apply the stash (git stash pop) or keep it; git stash list shows what is there.',
    match: git('stash', (args) => args[0] === 'drop' || args[0] === 'clear'),
  },
  {
    id: 'shell.git.prune_history',
    severity: 'risky',
    commands: G,
    reason: 'Expires the reflog or prunes unreachable objects now: lost commits can no longer be recovered.',
    suggestion: 'Let git gc run on its normal schedule.',
    match: (c) => {
      const call = gitCall(c);
      if (!call) return false;
      if (call.sub === 'reflog') return call.args[0] === 'expire' || call.args[0] === 'delete';
      return call.sub === 'gc' && call.args.some((a) => a === '--prune=now' || a === '--prune=all');
    },
  },
  {
    id: 'shell.git.update_ref_delete',
    severity: 'risky',
    commands: G,
    reason: 'Deletes a ref directly, bypassing git’s safety checks.',
    suggestion: 'Use git branch -d or git tag -d.',
    match: git('update-ref', (_a, f) => f.short.has('d')),
  },
];
