/**
 * Where a command's path arguments point, for the risk families (rules/exfil, persistence,
 * privilege, evidence): inside the workspace or outside it, in a form the families' patterns read
 * (`~/...` for any home folder), and what the command does to each path it changes (writes,
 * appends, deletes, changes its mode). find -exec's `{}` stands for the folders the find starts in.
 */
import type { Cmd } from './cmd.ts';
import { flags } from './match.ts';
import { HOME, normalizePath } from './paths.ts';
import { findRoots } from './readers.ts';

/** The paths a word stands for: `{}` in a command find -exec runs is every folder the find starts in. */
export function pathsOf(c: Cmd, raw: string): string[] {
  if (raw === '{}' && c.foundBy) return findRoots(c.foundBy);
  return [raw];
}

const TEMP_OR_STREAM = /^\/(tmp|var\/tmp|private\/tmp|dev\/(null|zero|stdin|stdout|stderr|fd\/\d+))(\/|$)/;

/**
 * True when `raw` names a place outside the workspace: an absolute or home path not inside it, or
 * a relative one that climbs out of it. A path known only at run time (`$f`) is not judged.
 * `/tmp` counts as outside only with `tempIsOutside` (a setuid copy of a shell there is still one).
 */
export function outsideWorkspace(c: Cmd, raw: string, tempIsOutside = false): boolean {
  if (raw === '' || raw === '-' || raw === '{}') return false;
  if (raw.startsWith('$') && !/^\$(HOME|\{HOME\})(\/|$)/.test(raw)) return false;
  const n = normalizePath(raw, c.dir);
  if (!n.startsWith('/')) return n === '..' || n.startsWith('../');
  const ws = c.env.workspace;
  if (ws !== null && (n === ws || n.startsWith(`${ws}/`))) return false;
  return tempIsOutside ? !/^\/dev\/(null|stdin|stdout|stderr|fd\/\d+)$/.test(n) : !TEMP_OR_STREAM.test(n);
}

const OTHER_HOME = /^\/(root|home\/[^/]+|Users\/[^/]+)(?=\/|$)/;

/**
 * The path as the families' patterns read it: normalised, any home folder written `~`
 * (`~/.config/autostart/x`, `/etc/cron.d/job`, or relative when the directory is unknown).
 */
export function placeOf(c: Cmd, raw: string): string {
  const n = normalizePath(raw, c.dir);
  if (n === HOME || n.startsWith(`${HOME}/`)) return `~${n.slice(HOME.length)}`;
  return n.replace(OTHER_HOME, '~');
}

export type ChangeKind = 'append' | 'overwrite' | 'delete' | 'mode';

export interface Change {
  path: string;
  kind: ChangeKind;
}

const REDIRECT_KIND: Record<string, ChangeKind> = {
  '>': 'overwrite',
  '>|': 'overwrite',
  '&>': 'overwrite',
  '>&': 'overwrite',
  '>>': 'append',
  '&>>': 'append',
  '<>': 'append',
};
const COPIES = new Set(['cp', 'install', 'ln', 'rsync', 'dd', 'ditto']);
const DELETES = new Set(['rm', 'unlink', 'rmdir', 'shred', 'srm', 'wipe']);
const MODES = new Set(['chmod', 'chown', 'chgrp', 'setfacl', 'chattr']);
const IN_PLACE = new Set(['sed', 'perl', 'gsed', 'ruby']);

/** Commands that change the paths they are given (and, with any command, redirections do). */
export const CHANGERS: ReadonlySet<string> = new Set([
  ...COPIES,
  ...DELETES,
  ...MODES,
  ...IN_PLACE,
  'mv',
  'tee',
  'truncate',
]);
const NONE: readonly Change[] = Object.freeze([]);
const cache = new WeakMap<Cmd, readonly Change[]>();

/** What the command does to the paths it changes: by redirection, copying, deleting, editing in place. */
export function changes(c: Cmd): readonly Change[] {
  // Most commands change nothing: they are answered without an allocation (the guard runs per call).
  if (c.redirects.length === 0 && !CHANGERS.has(c.name)) return NONE;
  let out = cache.get(c);
  if (out) return out;
  const list: Change[] = [];
  for (const r of c.redirects) {
    const kind = r.target ? REDIRECT_KIND[r.op] : undefined;
    if (kind === undefined || (r.op === '>&' && /^(\d+|-)$/.test(r.target!.text))) continue;
    list.push({ path: r.target!.text, kind });
  }
  if (CHANGERS.has(c.name)) commandChanges(c, list);
  out = list.length === 0 ? NONE : list;
  cache.set(c, out);
  return out;
}

function add(c: Cmd, out: Change[], paths: readonly string[], kind: ChangeKind) {
  for (const raw of paths) for (const path of pathsOf(c, raw)) out.push({ path, kind });
}

function commandChanges(c: Cmd, out: Change[]) {
  const name = c.name;
  const f = flags(c);
  const p = f.positionals;
  const last = p.length > 1 ? [p[p.length - 1]!] : [];
  if (name === 'dd')
    add(
      c,
      out,
      c.args.filter((a) => a.startsWith('of=')).map((a) => a.slice(3)),
      'overwrite',
    );
  else if (COPIES.has(name)) add(c, out, last, 'overwrite');
  else if (name === 'mv') {
    add(c, out, last, 'overwrite');
    add(c, out, p.slice(0, -1), 'delete');
  } else if (name === 'tee')
    add(c, out, p, f.short.has('a') || f.long.has('--append') ? 'append' : 'overwrite');
  else if (name === 'truncate') add(c, out, p, 'overwrite');
  else if (DELETES.has(name)) add(c, out, p, 'delete');
  else if (MODES.has(name)) add(c, out, p, 'mode');
  else if (f.short.has('i') || f.long.has('--in-place')) add(c, out, p, 'overwrite');
}
