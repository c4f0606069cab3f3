/**
 * Commands that read credential files: by naming one (normalised, globbed, through a symlink), by a
 * name pattern that selects them (`grep --include=.env`, `find -name id_rsa`), or by walking a tree
 * that holds them (`grep -r`, `rg`, `tar c`, `rsync -a`, `cp -r`, `scp -r`, `zip -r`, and what
 * `find -exec` / `find | xargs` run on the files find selects).
 */
import picomatch from 'picomatch';
import type { Cmd } from './analyze.ts';
import { flags, has, positionals } from './match.ts';
import {
  argValues,
  namePatternIsSecret,
  normalizePath,
  secretInTree,
  secretOf,
  secretReached,
  treeReachesSecrets,
} from './paths.ts';
import { gitCall } from './rules/git.ts';

/** A piece of every secret name SECRET_FILE knows: a word without one cannot name a secret. */
const SECRET_HINT =
  /env|ssh|gnupg|aws|netrc|credential|pgpass|pypirc|my\.cnf|vault|password|docker|kube|gcloud|gh\/|id_|shadow|sudoers|passwd|\/proc\//;

const EXCLUDE_OPTIONS = new Set(['--exclude', '--exclude-dir', '--ignore']);
const EXCLUDING = /^--(exclude|exclude-dir|ignore)=/;

const GIT_PRINTS = new Set(['show', 'diff', 'log', 'blame', 'annotate', 'grep', 'format-patch', 'archive']);

/** `git show HEAD:.env`, `git cat-file -p main:.ssh/id_rsa`: a committed secret, printed. */
function gitShowsSecret(c: Cmd): boolean {
  const call = gitCall(c);
  if (call && GIT_PRINTS.has(call.sub) && (call.sub !== 'log' || has(c, 'pL', '--patch'))) {
    // `git diff .env`, `git log -p -- .env`, `git blame .env`: the file's lines, printed.
    for (const p of call.flags.positionals)
      if (SECRET_HINT.test(p) && secretOf(p, c.dir) !== null) return true;
  }
  for (const a of c.args) {
    const colon = a.indexOf(':');
    if (colon < 0 || a.startsWith('-') || !SECRET_HINT.test(a)) continue;
    if (secretOf(a.slice(colon + 1), null) !== null) return true;
  }
  return false;
}

/** `$f` / `${f}` replaced by what the line set them to, when it set every one of them to a literal. */
function withVars(text: string, vars: ReadonlyMap<string, string>): string {
  if (vars.size === 0 || !text.includes('$')) return text;
  let known = true;
  const out = text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (m, a?: string, b?: string) => {
      const v = vars.get((a ?? b)!);
      if (v === undefined) {
        known = known && (a ?? b) === 'HOME';
        return m;
      }
      return v;
    },
  );
  return known ? out : text;
}

/** Commands that name a secret file without printing or sending its contents. */
export const NAMES_ONLY = new Set([
  'echo',
  'printf',
  'ls',
  'test',
  '[',
  '[[',
  'stat',
  'file',
  'cd',
  'source',
  '.',
  'export',
  'ssh',
  'ssh-add',
  'ssh-keygen',
  'git',
  'tee',
  'chmod',
  'chown',
  'touch',
  'mkdir',
  'rm',
]);

const GREPS = new Set(['grep', 'egrep', 'fgrep']);
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
const FIND_NAME_TESTS = new Set([
  '-name',
  '-iname',
  '-path',
  '-ipath',
  '-wholename',
  '-iwholename',
  '-lname',
]);

/** Values of options given as `--opt=v`, `--opt v` or (short) `-o v`. */
function optionValues(args: readonly string[], names: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) {
      if (names.has(a.slice(0, eq))) out.push(a.slice(eq + 1));
    } else if (names.has(a) && args[i + 1] !== undefined) out.push(args[++i]!);
  }
  return out;
}

const INCLUDES = new Set(['--include']);
const RG_GLOBS = new Set(['-g', '--glob', '--iglob']);

/** Name patterns a command selects its files by (grep / rsync --include, rg -g, find -name...). */
export function namePatterns(c: Cmd): string[] {
  if (GREPS.has(c.name) || c.name === 'rsync') return optionValues(c.args, INCLUDES);
  if (c.name === 'rg') return optionValues(c.args, RG_GLOBS).filter((g) => !g.startsWith('!'));
  if (c.name === 'find')
    return optionValues(c.args, FIND_NAME_TESTS).map((p) => p.slice(p.lastIndexOf('/') + 1));
  return [];
}

/** The find that selects the files this command works on: `find -exec cmd {}`, `find ... | xargs cmd`. */
export function finder(c: Cmd): Cmd | null {
  if (c.foundBy) return c.args.some((a) => a.includes('{}')) ? c.foundBy : null;
  if (c.viaXargs && c.stage > 0) {
    const up = c.pipeline[c.stage - 1]!;
    if (up.name === 'find') return up;
  }
  return null;
}

/** Where find starts: the words before its first test or action. */
export function findRoots(c: Cmd): string[] {
  const roots: string[] = [];
  for (let i = 0; i < c.args.length; i++) {
    const a = c.args[i]!;
    if (a === '-H' || a === '-L' || a === '-P' || a.startsWith('-O')) continue;
    if (a === '-D') {
      i++;
      continue;
    }
    if (a.startsWith('-') || a === '(' || a === '!' || a === '\\(') break;
    roots.push(a);
  }
  return roots.length > 0 ? roots : ['.'];
}

/**
 * The secret this command reads by naming it, or by a name pattern (its own or its find's), or
 * null. Names-only commands (ls, stat, rm...) never count.
 */
export function readsSecret(c: Cmd): boolean {
  if (c.name === 'git') return gitShowsSecret(c);
  if (NAMES_ONLY.has(c.name)) return false;
  // Judging the text alone, a word can name a secret only if some of the secret's name is in it.
  const textOnly = c.dir === null;
  for (let i = 0; i < c.args.length; i++) {
    const a = withVars(c.args[i]!, c.vars);
    const glob = c.argWords[i]?.glob === true;
    if (textOnly && !glob && !SECRET_HINT.test(a)) continue;
    // What a reader is told to leave out is not read (`grep -r --exclude=.env`).
    if (EXCLUDING.test(a) || (i > 0 && EXCLUDE_OPTIONS.has(c.args[i - 1]!))) continue;
    for (const v of argValues(a)) if (secretReached(v, glob, c.dir, c.env)) return true;
  }
  for (const r of c.redirects) {
    if (
      (r.op === '<' || r.op === '<>') &&
      r.target &&
      secretReached(withVars(r.target.text, c.vars), r.target.glob === true, c.dir, c.env)
    )
      return true;
  }
  if (namePatterns(c).some(namePatternIsSecret)) return true;
  const f = finder(c);
  return f !== null && namePatterns(f).some(namePatternIsSecret);
}

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
