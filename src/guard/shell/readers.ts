/**
 * Commands that read credential files by naming them: a path argument (normalised, globbed,
 * through a symlink, through a variable the line set), an option value (`--include=.env`,
 * `if=/etc/shadow`, curl's `@file`), a `<` redirect, a name pattern that selects them
 * (`grep --include=.env`, `find -name id_rsa`, and what find -exec / find | xargs then run), or
 * git printing one (`git show HEAD:.env`). Trees walked recursively are trees.ts.
 */
import type { Cmd } from './cmd.ts';
import { has } from './match.ts';
import { argValues, namePatternIsSecret, secretOf, secretReached } from './paths.ts';
import { gitCall } from './rules/git.ts';

/** A piece of every secret name SECRET_FILE knows: a word without one cannot name a secret. */
const SECRET_HINT =
  /env|ssh|gnupg|aws|netrc|containers|composer|\.fly\/|vercel|credential|pgpass|pypirc|npmrc|yarnrc|my\.cnf|mylogin|vault|password|docker|kube|gcloud|\.config\/|azure|\.oci|\.m2|gradle|terraform|pulumi|huggingface|boto|s3cfg|databricks|htpasswd|gitcookies|id_|shadow|sudoers|passwd|\/proc\//;

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

export const GREPS = new Set(['grep', 'egrep', 'fgrep']);
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
export function optionValues(args: readonly string[], names: ReadonlySet<string>): string[] {
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
export const RG_GLOBS = new Set(['-g', '--glob', '--iglob']);

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
