/**
 * The known-safe set for low trust: commands that only read. At low trust a command line runs
 * only when every command in it (after wrappers) is here and nothing is written by redirection.
 */
import type { Cmd } from './cmd.ts';
import { flags, has, writeTargets } from './match.ts';
import { gitCall } from './rules/git.ts';

type Check = true | ((c: Cmd) => boolean);

/** At most one positional: the second would be an output file (uniq in out, xxd in out). */
const oneInput = (c: Cmd) => flags(c).positionals.length <= 1;

const READ_ONLY_GIT = new Set([
  'status',
  'log',
  'diff',
  'show',
  'blame',
  'rev-parse',
  'ls-files',
  'ls-tree',
  'describe',
  'shortlog',
  'grep',
  'cat-file',
  'reflog',
  'whatchanged',
  'merge-base',
  'rev-list',
  'count-objects',
  'show-ref',
  'name-rev',
  'for-each-ref',
  'version',
  'help',
]);

function safeGit(c: Cmd): boolean {
  if (c.args.length === 1 && (c.args[0] === '--version' || c.args[0] === '--help')) return true;
  const call = gitCall(c);
  if (!call) return false;
  // --output writes a file even from log / diff.
  if (call.args.some((a) => a.startsWith('--output') || a === '--ext-diff')) return false;
  if (READ_ONLY_GIT.has(call.sub))
    return call.sub !== 'reflog' || !/^(expire|delete)$/.test(call.args[0] ?? '');
  const f = call.flags;
  if (call.sub === 'branch') {
    const listing = f.short.has('l') || f.long.has('--list') || f.positionals.length === 0;
    const changes =
      [...'dDmMcCfu'].some((x) => f.short.has(x)) ||
      ['--delete', '--move', '--copy', '--force', '--set-upstream-to', '--edit-description'].some((x) =>
        f.long.has(x),
      );
    return listing && !changes;
  }
  if (call.sub === 'tag')
    return (f.short.has('l') || f.long.has('--list') || f.positionals.length === 0) && !f.short.has('d');
  if (call.sub === 'remote')
    return f.positionals.length === 0 || f.positionals[0] === 'show' || f.positionals[0] === 'get-url';
  if (call.sub === 'config')
    return f.long.has('--get') || f.long.has('--list') || f.short.has('l') || f.long.has('--get-all');
  if (call.sub === 'stash') return call.args[0] === 'list' || call.args[0] === 'show';
  return false;
}

function safeFind(c: Cmd): boolean {
  // -exec'd commands are judged as commands of their own (see analyze); here only what find itself does.
  return !c.args.some((a) => /^-(delete|fprint0?|fprintf|fls)$/.test(a));
}

export const SAFE_COMMANDS: Record<string, Check> = {
  ls: true,
  cat: true,
  head: true,
  tail: true,
  wc: true,
  grep: true,
  egrep: true,
  fgrep: true,
  rg: (c) => !c.args.some((a) => a.startsWith('--pre')),
  ag: true,
  echo: true,
  printf: true,
  pwd: true,
  cd: true,
  find: safeFind,
  git: safeGit,
  tree: (c) => !has(c, 'o'),
  stat: true,
  file: true,
  du: true,
  df: true,
  which: true,
  whereis: true,
  type: true,
  whoami: true,
  id: true,
  date: (c) => !has(c, 's', '--set'),
  uname: true,
  hostname: (c) => flags(c).positionals.length === 0 && !has(c, 'F', '--file'),
  basename: true,
  dirname: true,
  realpath: true,
  readlink: true,
  sort: (c) => !has(c, 'o', '--output'),
  uniq: oneInput,
  cut: true,
  tr: true,
  diff: true,
  cmp: true,
  comm: true,
  nl: true,
  column: true,
  seq: true,
  true: true,
  false: true,
  test: true,
  '[': true,
  '[[': true,
  jq: true,
  sha1sum: true,
  sha256sum: true,
  sha512sum: true,
  md5sum: true,
  cksum: true,
  od: true,
  xxd: oneInput,
  hexdump: true,
  strings: true,
  tac: true,
  rev: true,
  fold: true,
  fmt: true,
  paste: true,
  join: true,
  expr: true,
  sleep: true,
  ps: true,
  uptime: true,
  lsblk: true,
  free: true,
  locale: true,
  tty: true,
  nproc: true,
  less: true,
  more: true,
};

/** Redirect targets that write nothing anyone keeps. */
const HARMLESS_SINKS = /^(\/dev\/(null|stdout|stderr|tty|fd\/[0-2]))$/;

export function writesFiles(c: Cmd): boolean {
  return writeTargets(c).some((t) => !HARMLESS_SINKS.test(t));
}

/**
 * run_command's `allowed_commands` entries as argv prefixes: `"git"`, `"git status"` or
 * `["git", "log"]`. The program is compared as written (`git` does not admit `./git`), as the
 * tool itself compares it.
 */
export function commandPrefixes(value: unknown): string[][] {
  if (!Array.isArray(value)) return [];
  const out: string[][] = [];
  for (const entry of value) {
    if (typeof entry === 'string' && entry.trim() !== '') out.push(entry.trim().split(/\s+/));
    else if (Array.isArray(entry) && entry.length > 0 && entry.every((x) => typeof x === 'string'))
      out.push(entry);
  }
  return out;
}

function matchesPrefix(c: Cmd, prefix: readonly string[]): boolean {
  if (c.argv0 !== prefix[0]) return false;
  for (let i = 1; i < prefix.length; i++) if (c.args[i - 1] !== prefix[i]) return false;
  return true;
}

/** True when the command is in the known-safe set, or one of the operator's allowed_commands prefixes. */
export function isKnownSafe(c: Cmd, extra: readonly (readonly string[])[]): boolean {
  if (c.dynamicName) return false;
  if (c.name === '') return true;
  if (extra.some((p) => matchesPrefix(c, p))) return true;
  const check = SAFE_COMMANDS[c.name];
  if (check === undefined) return false;
  return check === true || check(c);
}
