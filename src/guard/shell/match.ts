/**
 * Small helpers the rule catalogs are written with: option parsing that needs no per-command
 * table, subcommand lookup, and the classification of a path argument (root, home, system dir...).
 */
import { posix } from 'node:path';
import type { Severity } from '../types.ts';
import type { Cmd } from './cmd.ts';

export interface ShellRule {
  /** Stable id, `shell.<family>.<name>`. */
  id: string;
  severity: Severity;
  reason: string;
  suggestion: string;
  /** Command names the rule looks at (after wrapper removal); omitted with `also`: every command. */
  commands?: readonly string[];
  /**
   * Other commands the rule looks at, by what they have rather than their name: redirections,
   * inline code that uses the network, a privilege wrapper, a command word built at run time.
   */
  also?: { redirects?: true; inlineNet?: true; elevated?: true; dynamic?: true };
  match(cmd: Cmd): boolean;
}

/** A rule on the raw text of a script (fork bombs have no useful command structure). */
export interface RawRule {
  id: string;
  severity: Severity;
  reason: string;
  suggestion: string;
  pattern: RegExp;
}

export interface Flags {
  /** Letters of short options, clusters split (`-rf` -> r, f). */
  short: Set<string>;
  /** Long options without their `=value`. */
  long: Set<string>;
  /** Words that are not options; everything after `--` counts. */
  positionals: string[];
}

const cache = new WeakMap<Cmd, Flags>();

/** Options of a command parsed without knowing which take values: good for flag tests, rough for positionals. */
export function flags(cmd: Cmd): Flags {
  let f = cache.get(cmd);
  if (f) return f;
  f = parseFlags(cmd.args);
  cache.set(cmd, f);
  return f;
}

export function parseFlags(args: readonly string[]): Flags {
  const f: Flags = { short: new Set(), long: new Set(), positionals: [] };
  let rest = false;
  for (const a of args) {
    if (rest) f.positionals.push(a);
    else if (a === '--') rest = true;
    else if (a.startsWith('--')) f.long.add(a.split('=')[0]!);
    else if (a.startsWith('-') && a.length > 1) for (let k = 1; k < a.length; k++) f.short.add(a[k]!);
    else f.positionals.push(a);
  }
  return f;
}

/** True when any of the short letters or long options is present. */
export function has(cmd: Cmd, short: string, ...long: string[]): boolean {
  const f = flags(cmd);
  for (const c of short) if (f.short.has(c)) return true;
  for (const l of long) if (f.long.has(l)) return true;
  return false;
}

/**
 * Positional words after skipping options, where `withValue` lists the options (short or long)
 * that take the next word. For CLIs with global options before a subcommand (git, docker, aws).
 */
export function positionals(args: readonly string[], withValue: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('-') && a.length > 1) {
      if (!a.includes('=') && withValue.has(a)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

/** Index of the subcommand (first positional) in `args`, skipping global options; -1 if none. */
export function subcommandIndex(args: readonly string[], withValue: ReadonlySet<string>): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return i + 1 < args.length ? i + 1 : -1;
    if (a.startsWith('-') && a.length > 1) {
      if (!a.includes('=') && withValue.has(a)) i++;
      continue;
    }
    return i;
  }
  return -1;
}

export type TargetKind = 'root' | 'system' | 'home' | 'cwd' | 'dynamic' | 'absolute' | 'tmp' | 'relative';

/** Top-level directories whose removal breaks the machine or another user's data. */
const SYSTEM_DIRS = new Set([
  'bin',
  'boot',
  'dev',
  'etc',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'opt',
  'proc',
  'sbin',
  'srv',
  'sys',
  'usr',
  'var',
  'mnt',
  'media',
  'snap',
  'nix',
  'System',
  'Library',
  'Applications',
  'private',
  'Volumes',
]);
/** Second-level directories just as vital (`/usr/lib`, `/var/lib`). */
const SYSTEM_PARENTS = new Set(['usr', 'etc', 'var', 'boot', 'lib', 'bin', 'sbin', 'System', 'Library']);
const GLOB_TAIL = /^(\*+|\.\*|\*\.\*|\.\[!.\]\*|\?+)$/;

/**
 * What a path argument points at. Globs at the end count as the directory itself (`/*` is `/`),
 * `$HOME` and `~` are home, other variables are unknown (`dynamic`).
 */
export function targetKind(raw: string): TargetKind {
  let s = raw.replace(/^(\$HOME|\$\{HOME\})(?=\/|$)/, '~');
  // `{}` is find -exec's placeholder: the paths come from find, like xargs input.
  if (s.startsWith('$') || s === '{}') return 'dynamic';
  const home = s.startsWith('~');
  if (home) {
    const slash = s.indexOf('/');
    s = slash < 0 ? '/' : `/${s.slice(slash + 1)}`;
  }
  const abs = s.startsWith('/');
  const parts = posix
    .normalize(s || '.')
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  while (parts.length > 0 && GLOB_TAIL.test(parts[parts.length - 1]!)) parts.pop();
  if (home) return parts.length === 0 ? 'home' : 'absolute';
  if (!abs) {
    if (parts.length === 0 || parts.every((p) => p === '..')) return 'cwd';
    return 'relative';
  }
  if (parts.length === 0) return 'root';
  const [top, second] = parts;
  if (parts.length === 1 && (top === 'root' || top === 'home' || top === 'Users')) return 'system';
  if (parts.length === 2 && (top === 'home' || top === 'Users')) return 'home';
  const inTmp = top === 'tmp' ? 1 : (top === 'var' || top === 'private') && second === 'tmp' ? 2 : 0;
  if (inTmp > 0) return parts.length > inTmp ? 'tmp' : 'system';
  if (parts.length === 1 && SYSTEM_DIRS.has(top!)) return 'system';
  if (parts.length === 2 && SYSTEM_PARENTS.has(top!)) return 'system';
  return 'absolute';
}

/** A relative path taken against the directory an earlier `cd` set, when it is known. */
export function inCwd(cmd: Cmd, p: string): string {
  if (cmd.cwd === null || p.startsWith('/') || p.startsWith('~') || p.startsWith('$') || p === '{}') return p;
  return `${cmd.cwd.replace(/\/$/, '')}/${p}`;
}

/** Any of `paths` (default: the positional arguments) of a kind in `kinds`. */
export function targets(cmd: Cmd, ...kinds: TargetKind[]): boolean {
  return targetsIn(cmd, flags(cmd).positionals, ...kinds);
}

export function targetsIn(cmd: Cmd, paths: readonly string[], ...kinds: TargetKind[]): boolean {
  for (const p of paths) if (kinds.includes(targetKind(inCwd(cmd, p)))) return true;
  return false;
}

/** Block devices and other raw disks under /dev (not null, zero, tty, stdout...). */
export function isDevice(path: string): boolean {
  return /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|dm-|md|loop|mapper\/|sr|nbd|zd|mtd)/.test(path);
}

/** System locations a command should not write to. */
export function isSystemPath(path: string): boolean {
  return /^\/(etc|usr|boot|bin|sbin|lib|lib32|lib64|libx32|System|Library)(\/|$)/.test(posix.normalize(path));
}

/** Commands that write the paths they are given (see writtenPaths). */
const COPIERS = ['cp', 'mv', 'install', 'ln', 'rsync', 'tee', 'truncate', 'touch', 'dd'];

/** The destination a copy-like command writes: its last positional (or every one, for tee/truncate/touch). */
export function writtenPaths(c: Cmd): string[] {
  const p = flags(c).positionals;
  if (c.name === 'dd') return c.args.filter((a) => a.startsWith('of=')).map((a) => a.slice(3));
  if (c.name === 'tee' || c.name === 'truncate' || c.name === 'touch') return p;
  return p.length > 1 ? [p[p.length - 1]!] : [];
}

/** Files and redirect targets a command writes: redirects, and a copy-like command's destinations. */
export function writtenFiles(c: Cmd): string[] {
  return COPIERS.includes(c.name) ? [...writeTargets(c), ...writtenPaths(c)] : writeTargets(c);
}

const WRITE_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '<>']);

/** Output redirect targets (`>`, `>>`, `>|`, `&>`, `<>`, and `>& file`) as written; fd duplications are not files. */
export function writeTargets(cmd: Cmd): string[] {
  const out: string[] = [];
  for (const r of cmd.redirects) {
    if (!r.target) continue;
    if (WRITE_OPS.has(r.op) || (r.op === '>&' && !/^(\d+|-)$/.test(r.target.text))) out.push(r.target.text);
  }
  return out;
}

/** Words that name the command or a flag, case-insensitively (`FLUSHALL`, `flushall`). */
export function argsInclude(cmd: Cmd, ...words: string[]): boolean {
  const wanted = new Set(words.map((w) => w.toLowerCase()));
  return cmd.args.some((a) => wanted.has(a.toLowerCase()));
}
