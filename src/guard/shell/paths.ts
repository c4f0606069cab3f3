/**
 * Path arguments as the kernel will see them, for the secret-file rules: normalised (`~`, `$HOME`,
 * `//`, `/./`, `..`, trailing slashes), taken against the directory the command runs in when it is
 * known, globs judged by what they could match (and, in shell mode, by what they do match on
 * disk), and recursive readers judged by the trees they walk.
 */
import { type Dirent, lstatSync, readdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { posix } from 'node:path';
import picomatch from 'picomatch';

/** Where a command line runs: what the guard knows of the machine. All null: judge the text only. */
export interface ShellEnv {
  /** Absolute workspace path. */
  workspace: string | null;
  /** Absolute directory the command line starts in (the workspace, or run_command's `cwd` in it). */
  cwd: string | null;
  /** The line runs through a shell (run_command `shell: true`), so unquoted globs are expanded. */
  expand: boolean;
}

export const NO_ENV: ShellEnv = Object.freeze({ workspace: null, cwd: null, expand: false });

export const HOME = homedir();

/**
 * Credential files: reading one puts the secret into the agent's context (and its provider's logs).
 * The same files the file guard refuses (src/guard/file.ts: CREDENTIAL_PATHS, SECRET_FILES).
 */
export const SECRET_FILE =
  /(^|\/)(\.ssh\/(?!.*\.pub$)[^/]+|\.gnupg(\/|$)|\.aws\/[^/]+$|[._]netrc$|\.git-credentials$|\.gitcookies$|\.pgpass$|\.pypirc$|\.npmrc$|\.yarnrc(\.yml)?$|\.my\.cnf$|\.mylogin\.cnf$|\.vault-token$|\.terraformrc$|\.boto$|\.s3cfg$|\.databrickscfg$|\.htpasswd$|\.dockercfg$|kubeconfig$|\.password-store(\/|$)|\.docker\/config\.json$|containers\/(\d+\/)?auth\.json$|\.config\/helm\/(registry\/config\.json|repositories\.yaml)$|\.config\/glab-cli\/|\.(config\/)?composer\/auth\.json$|\.(ivy2|sbt)\/\.credentials$|\.fly\/config\.yml$|com\.vercel\.cli\/auth\.json$|\.config\/stripe\/config\.toml$|\.kube\/[^/]+$|\.azure\/|\.oci\/|\.config\/(gcloud|gh|hub|op|doctl|hcloud)\/|\.config\/git\/credentials$|\.config\/rclone\/rclone\.conf$|\.(cargo|gem)\/credentials(\.toml)?$|\.terraform\.d\/credentials\.tfrc\.json$|\.m2\/settings(-security)?\.xml$|\.gradle\/gradle\.properties$|\.pulumi\/credentials\.json$|\.?huggingface\/token$|id_(?![^/]*\.pub$)(rsa|dsa|ecdsa|ed25519|xmss)(_sk)?([._-][^/]*)?$)|^\/(private\/)?etc\/(shadow|gshadow|sudoers|master\.passwd|security\/opasswd|ssh\/ssh_host_[^/]*_key$)|^\/proc\/[^/]+\/(task\/[^/]+\/)?(environ|mem)$|(^|\/)\.env(\.(?!example$|sample$|template$|dist$)[^/]+)?$/;

/** Directories that are nothing but credentials: walking one reads them all. */
const SECRET_DIR =
  /(^|\/)(\.ssh|\.gnupg|\.aws|\.azure|\.oci|\.kube|\.docker|\.password-store|\.config\/(gcloud|gh|hub|op|doctl|hcloud))$|^\/(private\/)?etc\/(ssh|sudoers\.d)$/;

const GLOB_CHARS = /[*?[{]/;

/** `fn` remembered by its string argument, at most `max` entries (cleared when full). */
export function memo<T>(fn: (key: string) => T, max: number): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let v = cache.get(key);
    if (v === undefined && !cache.has(key)) {
      v = fn(key);
      if (cache.size >= max) cache.clear();
      cache.set(key, v);
    }
    return v as T;
  };
}

/** `$HOME/x` and `${HOME}/x` read as `~/x`; anything else with `$` is unknown. */
function homeForm(raw: string): string {
  return raw.replace(/^(\$HOME|\$\{HOME\})(?=\/|$)/, '~');
}

/**
 * The path as the kernel resolves it, lexically: `~` is the home directory, a relative path is
 * taken against `dir` when known, and `//`, `/./`, `..` and trailing slashes are collapsed.
 */
export function normalizePath(raw: string, dir: string | null): string {
  let s = homeForm(raw);
  if (s === '~' || s.startsWith('~/')) s = HOME + s.slice(1);
  else if (dir !== null && !s.startsWith('/') && !s.startsWith('~') && !s.startsWith('$')) s = `${dir}/${s}`;
  s = posix.normalize(s);
  if (s.startsWith('//')) s = s.replace(/^\/+/, '/');
  if (s.length > 1 && s.endsWith('/')) s = s.replace(/\/+$/, '') || '/';
  return s;
}

/**
 * The values an argument names: the word, what follows `=` in `--opt=v` / `if=v`, a short option's
 * glued value, and a file curl / httpie send (`@file`, `-d @/etc/shadow`, `file=@.env`).
 */
export function argValues(arg: string): string[] {
  let values: string[];
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    values = eq > 0 ? [arg.slice(eq + 1)] : [];
  } else if (arg.startsWith('-') && arg.length > 2) values = [arg, arg.slice(2)];
  else {
    const eq = /^[A-Za-z_][A-Za-z0-9_-]*=/.exec(arg);
    values = eq ? [arg, arg.slice(eq[0].length)] : [arg];
  }
  for (const v of values) if (v.startsWith('@') && v.length > 1) return [...values, v.slice(1)];
  return values;
}

/** The secret a path names (normalised), or null. */
export function secretOf(raw: string, dir: string | null): string | null {
  if (raw === '' || raw === '-') return null;
  if (SECRET_FILE.test(raw)) return raw;
  if (raw.includes('$') && !/^(\$HOME|\$\{HOME\})(\/|$)/.test(raw)) return null;
  const n = normalizePath(raw, dir);
  if (SECRET_FILE.test(n)) return n;
  // Relative to an unknown directory, `a/../.env` still names `.env` somewhere.
  const bare = normalizePath(raw, null);
  return bare !== n && SECRET_FILE.test(bare) ? bare : null;
}

/** Names a glob segment may stand for that make a path secret (file names, and the folders above them). */
const VOCABULARY = [
  '.env',
  '.env.local',
  '.env.production',
  'shadow',
  'gshadow',
  'sudoers',
  'master.passwd',
  'id_rsa',
  'id_dsa',
  'id_ecdsa',
  'id_ed25519',
  '.netrc',
  '.pgpass',
  '.pypirc',
  '.my.cnf',
  '.git-credentials',
  '.vault-token',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.dockercfg',
  '.gitcookies',
  '.terraformrc',
  '.boto',
  '.s3cfg',
  'kubeconfig',
  '.azure',
  '.m2',
  'settings.xml',
  'credentials',
  'config',
  'config.json',
  '.ssh',
  '.gnupg',
  '.aws',
  '.kube',
  '.docker',
  '.config',
  'gcloud',
  '.password-store',
  'etc',
  'ssh',
];
const FILLER = 'x';

// bash's globstar is off by default: `**` is `*`. The key is the dot flag (0/1) then the segment.
const segmentMatcherOf = memo(
  (key) => picomatch(key.slice(1).replace(/\*\*+/g, '*'), { dot: key[0] === '1' }),
  512,
);
function segmentMatcher(seg: string, dot: boolean): (name: string) => boolean {
  return segmentMatcherOf(`${dot ? 1 : 0}${seg}`);
}

/** Literal characters of a glob segment: what is left without wildcards, brackets and brace syntax. */
function literalLength(seg: string): number {
  return seg.replace(/\[[^\]]*\]|[*?{},!]/g, '').length;
}

/**
 * True when some name the glob can match is a secret, whatever is on disk now: each globbed segment
 * is tried as every secret name it matches (when it has two or more literal characters or asks
 * for dot files, so `*` alone is not taken for `id_rsa` but `.*` is taken for `.env`) and as an
 * ordinary name. `dot`: a leading `*` matches dot
 * files (grep --include, find -name); the shell's own globs do not.
 */
const couldBeSecretOf = memo((key) => globCouldBeSecretUncached(key.slice(1), key[0] === '1'), 1024);

export function globCouldBeSecret(pattern: string, dot: boolean): boolean {
  if (!GLOB_CHARS.test(pattern)) return SECRET_FILE.test(pattern);
  return couldBeSecretOf(`${dot ? 1 : 0}${pattern}`);
}

function globCouldBeSecretUncached(pattern: string, dot: boolean): boolean {
  const segs = pattern.split('/');
  let combos: string[] = [''];
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    let options: string[];
    if (!GLOB_CHARS.test(seg) || seg === '{}') options = [seg];
    else {
      options = [FILLER];
      if (literalLength(seg) >= 2 || seg.startsWith('.')) {
        const m = segmentMatcher(seg, dot);
        for (const v of VOCABULARY) if (m(v)) options.push(v);
      }
    }
    const next: string[] = [];
    for (const c of combos) for (const o of options) next.push(i === 0 ? o : `${c}/${o}`);
    combos = next.length > 256 ? next.slice(0, 256) : next;
  }
  return combos.some((c) => SECRET_FILE.test(c) || SECRET_DIR.test(c));
}

/**
 * What an absolute glob matches on disk now, as bash would expand it (no dot files unless the
 * segment starts with a dot). Bounded: at most `limit` paths and 64 directory reads.
 */
export function expandGlob(pattern: string, limit = 512): string[] {
  if (!pattern.startsWith('/')) return [];
  const segs = pattern.split('/').filter((s) => s !== '');
  let paths = ['/'];
  let reads = 0;
  for (const seg of segs) {
    const next: string[] = [];
    if (!GLOB_CHARS.test(seg)) {
      for (const p of paths) next.push(p === '/' ? `/${seg}` : `${p}/${seg}`);
    } else {
      const m = segmentMatcher(seg, false);
      for (const p of paths) {
        if (++reads > 64) return next;
        let entries: Dirent[];
        try {
          entries = readdirSync(p, { withFileTypes: true });
        } catch {
          continue;
        }
        for (const e of entries) {
          if (m(e.name)) next.push(p === '/' ? `/${e.name}` : `${p}/${e.name}`);
          if (next.length >= limit) break;
        }
      }
    }
    paths = next;
    if (paths.length === 0) return [];
  }
  return paths;
}

/** The real path of an existing file (symlinks followed), or null. */
export function realOf(p: string): string | null {
  // lstat first: most words (a grep pattern, a new file name) do not exist, and a thrown ENOENT costs more.
  if (!lstatSync(p, { throwIfNoEntry: false })) return null;
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
}

/**
 * The secret a path argument reaches, or null: by its name (normalised), by any name its glob could
 * match, by what the glob matches on disk in shell mode, and by where its symlinks lead.
 */
export function secretReached(raw: string, glob: boolean, dir: string | null, env: ShellEnv): string | null {
  const named = secretOf(raw, dir);
  if (named) return named;
  if (raw.includes('$') && !/^(\$HOME|\$\{HOME\})(\/|$)/.test(raw)) return null;
  const n = normalizePath(raw, dir);
  if (glob && GLOB_CHARS.test(raw)) {
    if (globCouldBeSecret(n, false) || globCouldBeSecret(normalizePath(raw, null), false)) return n;
    if (env.expand && n.startsWith('/')) {
      for (const p of expandGlob(n)) {
        if (SECRET_FILE.test(p)) return p;
        const real = realOf(p);
        if (real && SECRET_FILE.test(real)) return real;
      }
    }
    return null;
  }
  if (env.cwd !== null && n.startsWith('/')) {
    const real = realOf(n);
    if (real && real !== n && SECRET_FILE.test(real)) return real;
  }
  return null;
}

/** A directory made of credentials (~/.ssh, ~/.aws, /etc/ssh...). */
export function isSecretDir(p: string): boolean {
  return SECRET_DIR.test(p);
}

function isInside(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);
}

/** Places whose trees hold credentials: walking one of them, or a folder above one, reaches them. */
const SECRET_HOMES = [
  '/etc/shadow',
  '/etc/ssh',
  '/root/.ssh',
  '/var/backups',
  '/proc/1/environ',
  `${HOME}/.ssh`,
];

/**
 * Why walking the tree at `root` can reach credential files, or null: it is a credential folder,
 * a folder above one (/, /etc, /home, ~ ...), inside a home directory, or above the workspace
 * (where the organism's own config and .env live). A relative root that climbs with `..` from an
 * unknown directory counts as above the workspace.
 */
export function treeReachesSecrets(root: string, dir: string | null, env: ShellEnv): string | null {
  if (root.includes('$') && !/^(\$HOME|\$\{HOME\})(\/|$)/.test(root)) return null;
  const n = normalizePath(root, dir);
  if (isSecretDir(n) || SECRET_FILE.test(n)) return `${n} holds credentials`;
  if (!n.startsWith('/'))
    return n === '..' || n.startsWith('../') ? `${root} climbs above the working directory` : null;
  for (const s of SECRET_HOMES) if (isInside(n, s)) return `${n} contains ${s}`;
  if (/^\/(home|Users)(\/|$)/.test(n) || isInside('/root', n) || isInside(HOME, n) || isInside(n, HOME))
    return `${n} is in or above a home directory`;
  if (env.workspace !== null && n !== env.workspace && isInside(n, env.workspace))
    return `${n} is above the workspace`;
  return null;
}

/**
 * A credential file in the tree at `dir` (bounded walk: 2,000 entries, 6 levels; node_modules and
 * .git skipped), or null. `hidden`: whether the walker reads dot files at all (rg does not by default).
 */
export function secretInTree(
  dir: string,
  hidden: boolean,
  excluded: (name: string) => boolean,
): string | null {
  let budget = 2000;
  const walk = (d: string, depth: number): string | null => {
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return null;
    }
    const dirs: string[] = [];
    for (const e of entries) {
      if (--budget < 0) return null;
      if (!hidden && e.name.startsWith('.')) continue;
      if (excluded(e.name)) continue;
      const p = `${d}/${e.name}`;
      if (SECRET_FILE.test(p) || (e.isDirectory() && isSecretDir(p))) return p;
      if (e.isDirectory() && e.name !== 'node_modules' && e.name !== '.git') dirs.push(p);
    }
    if (depth >= 6) return null;
    for (const sub of dirs) {
      const hit = walk(sub, depth + 1);
      if (hit || budget < 0) return hit;
    }
    return null;
  };
  return walk(dir, 0);
}

/** A glob (grep --include, find -name, fnmatch semantics: `*` matches a leading dot) that can name a credential file. */
export const namePatternIsSecret: (pattern: string) => boolean = memo(namePatternIsSecretUncached, 1024);

function namePatternIsSecretUncached(pattern: string): boolean {
  if (pattern === '' || pattern === '*') return false;
  if (SECRET_FILE.test(pattern) || SECRET_FILE.test(`/${pattern}`)) return true;
  if (!GLOB_CHARS.test(pattern)) return false;
  const m = segmentMatcher(pattern, true);
  if (literalLength(pattern) < 2) return false;
  for (const v of VOCABULARY)
    if (m(v) && (SECRET_FILE.test(`/${v}`) || SECRET_FILE.test(`/etc/${v}`))) return true;
  return false;
}
