/**
 * Recursive readers and the trees they walk: grep -r, rg / ag, tar c, rsync -a, cp -r, scp -r,
 * zip -r, and what find -exec / find | xargs run on the files find selects. A walk reaches
 * credential files when it starts at one, above one, in a home directory or above the workspace,
 * or (when the place is known) when a bounded look into the tree finds one.
 */
import picomatch from 'picomatch';
import type { Cmd } from './cmd.ts';
import { flags, has, positionals } from './match.ts';
import { normalizePath, secretInTree, treeReachesSecrets } from './paths.ts';
import { finder, findRoots, GREPS, NAMES_ONLY, optionValues, RG_GLOBS } from './readers.ts';

const GREP_WITH_VALUE = new Set([
  '-e',
  '-f',
  '-m',
  '-A',
  '-B',
  '-C',
  '-d',
  '-D',
  '--regexp',
  '--file',
  '--max-count',
  '--after-context',
  '--before-context',
  '--context',
  '--directories',
  '--devices',
  '--include',
  '--exclude',
  '--exclude-dir',
  '--exclude-from',
  '--label',
  '--binary-files',
]);
const RG_WITH_VALUE = new Set([
  '-e',
  '-f',
  '-g',
  '-t',
  '-T',
  '-m',
  '-A',
  '-B',
  '-C',
  '-j',
  '-M',
  '-r',
  '-E',
  '-d',
  '--regexp',
  '--file',
  '--glob',
  '--iglob',
  '--type',
  '--type-not',
  '--type-add',
  '--max-count',
  '--after-context',
  '--before-context',
  '--context',
  '--threads',
  '--max-columns',
  '--replace',
  '--encoding',
  '--ignore-file',
  '--pre',
  '--pre-glob',
  '--sort',
  '--sortr',
  '--max-depth',
  '--max-filesize',
  '--colors',
  '--path-separator',
  '--context-separator',
  '--field-match-separator',
  '--ignore',
  '--file-search-regex',
  '-G',
]);
const RSYNC_WITH_VALUE = new Set([
  '-e',
  '--rsh',
  '--include',
  '--exclude',
  '-f',
  '--filter',
  '--exclude-from',
  '--include-from',
  '--files-from',
  '-T',
  '--temp-dir',
  '--partial-dir',
  '--backup-dir',
  '--compare-dest',
  '--link-dest',
  '--copy-dest',
  '-B',
  '--block-size',
  '--chmod',
  '--port',
  '--password-file',
  '--log-file',
  '--bwlimit',
  '--timeout',
  '--max-size',
  '--min-size',
  '-M',
  '--remote-option',
  '--rsync-path',
  '--out-format',
]);
const CP_WITH_VALUE = new Set(['-t', '--target-directory', '-S', '--suffix']);
const SCP_WITH_VALUE = new Set(['-P', '-i', '-o', '-F', '-c', '-l', '-S', '-J', '-D', '-X']);
const ZIP_WITH_VALUE = new Set(['-x', '-i', '-b', '-n', '-t', '-tt', '-P', '-Z', '-O']);
interface Walk {
  roots: string[];
  /** Prints what it reads (so a tree inside the workspace is looked into too). */
  prints: boolean;
  /** Reads dot files. */
  hidden: boolean;
  /** Base directory of relative roots when the command sets one (tar -C). */
  base: string | null;
  excludes: string[];
}

function walk(roots: string[], prints: boolean, extra?: Partial<Walk>): Walk {
  return { roots, prints, hidden: true, base: null, excludes: [], ...extra };
}

const GREP_DIRECTORIES = new Set(['-d', '--directories']);
const GREP_EXCLUDES = new Set(['--exclude', '--exclude-dir']);
const TAR_WITH_VALUE = new Set([
  '-C',
  '--directory',
  '-f',
  '--file',
  '-T',
  '--files-from',
  '-X',
  '--exclude-from',
  '-b',
  '-H',
  '--format',
]);
const TAR_DIRECTORY = new Set(['-C', '--directory']);

/** Trees this command reads recursively, or null when it reads none. */
export function recursiveWalk(c: Cmd): Walk | null {
  const a = c.args;
  // What find -exec / find | xargs run reads the files find selects, whatever its own options say.
  const found = finder(c);
  if (found !== null) return NAMES_ONLY.has(c.name) ? null : walk(findRoots(found), true);
  if (GREPS.has(c.name)) {
    const f = flags(c);
    const recursive =
      f.short.has('r') ||
      f.short.has('R') ||
      f.long.has('--recursive') ||
      f.long.has('--dereference-recursive') ||
      optionValues(a, GREP_DIRECTORIES).includes('recurse');
    if (!recursive) return null;
    const pos = positionals(a, GREP_WITH_VALUE);
    const explicit = a.some(
      (x) => x === '-e' || x === '-f' || /^--(regexp|file)(=|$)/.test(x) || /^-[a-zA-Z]*[ef].+/.test(x),
    );
    const roots = explicit ? pos : pos.slice(1);
    return walk(roots.length > 0 ? roots : ['.'], true, {
      excludes: optionValues(a, GREP_EXCLUDES),
    });
  }
  if (c.name === 'rg' || c.name === 'ag') {
    const pos = positionals(a, RG_WITH_VALUE);
    const explicit = a.some((x) => x === '-e' || x === '-f' || /^--(regexp|file)(=|$)/.test(x));
    const files = a.includes('--files');
    const roots = explicit || files ? pos : pos.slice(1);
    const hidden =
      a.includes('--hidden') ||
      a.includes('-.') ||
      a.some((x) => /^-[a-zA-Z]*u[a-zA-Z]*u/.test(x)) ||
      a.filter((x) => x === '-u').length > 1;
    return walk(roots.length > 0 ? roots : ['.'], !files, {
      hidden: c.name === 'ag' ? a.includes('--hidden') || a.includes('-u') : hidden,
      excludes: optionValues(a, RG_GLOBS)
        .filter((g) => g.startsWith('!'))
        .map((g) => g.slice(1)),
    });
  }
  if (c.name === 'tar') {
    const first = a[0] ?? '';
    const oldStyle = first !== '' && !first.startsWith('-') && /^[a-zA-Z]+$/.test(first);
    const creates = oldStyle ? /[cru]/.test(first) : has(c, 'cru', '--create', '--append', '--update');
    if (!creates) return null;
    const pos = positionals(a, TAR_WITH_VALUE);
    const fileOpt = a.some((x) => /^-[a-zA-Z]*f$/.test(x)) || a.includes('--file');
    // positionals() skips an option's value only when the option is exactly `-f`; `-cf x.tar` leaves x.tar.
    let roots = oldStyle ? pos.slice(1) : pos;
    if (oldStyle && first.includes('f')) roots = roots.slice(1);
    else if (!oldStyle && fileOpt && !a.includes('-f') && !a.includes('--file')) roots = roots.slice(1);
    const dirs = optionValues(a, TAR_DIRECTORY);
    const base = dirs.length > 0 ? normalizePath(dirs[dirs.length - 1]!, c.dir) : null;
    const toStdout = !fileOpt || /(^|\s)-(\s|$)/.test(a.join(' '));
    return walk(roots, toStdout, { base });
  }
  if (c.name === 'rsync') {
    if (!has(c, 'ra', '--recursive', '--archive')) return null;
    const pos = positionals(a, RSYNC_WITH_VALUE);
    return walk(pos.slice(0, -1).filter(local), false);
  }
  if (c.name === 'cp' || c.name === 'scp') {
    if (!has(c, c.name === 'cp' ? 'rRa' : 'r', '--recursive', '--archive')) return null;
    const pos = positionals(a, c.name === 'cp' ? CP_WITH_VALUE : SCP_WITH_VALUE);
    const target =
      c.name === 'cp' &&
      (has(c, 't', '--target-directory') || a.some((x) => x.startsWith('--target-directory=')));
    return walk((target ? pos : pos.slice(0, -1)).filter(local), c.name === 'scp');
  }
  if (c.name === 'zip') {
    if (!has(c, 'rR', '--recurse-paths')) return null;
    return walk(positionals(a, ZIP_WITH_VALUE).slice(1), false);
  }
  return null;
}

/** A local path, not `host:path` (rsync / scp remote side). */
function local(p: string): boolean {
  return !/^[^/]*:/.test(p);
}

const excludeCache = new Map<string, (name: string) => boolean>();

/** Why this command's recursive read reaches credential files, or null. */
export function recursiveSecretRead(c: Cmd): string | null {
  const w = recursiveWalk(c);
  if (w === null) return null;
  const dir = w.base ?? c.dir;
  for (const root of w.roots) {
    const why = treeReachesSecrets(root, dir, c.env);
    if (why) return why;
  }
  // Inside the workspace: look, when the directory is known and the command prints what it reads.
  if (!w.prints || dir === null || c.env.cwd === null) return null;
  const key = w.excludes.join('\0');
  let excluded = excludeCache.get(key);
  if (!excluded) {
    const ms = w.excludes.map((g) => picomatch(g, { dot: true }));
    excluded = (name: string) => ms.some((m) => m(name));
    if (excludeCache.size > 64) excludeCache.clear();
    excludeCache.set(key, excluded);
  }
  for (const root of w.roots) {
    if (root.includes('$')) continue;
    const hit = secretInTree(normalizePath(root, dir), w.hidden, excluded);
    if (hit) return `${hit} is in the tree`;
  }
  return null;
}
