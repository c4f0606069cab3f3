/**
 * The audit key: the secret that makes the audit chain hold against whoever can write the log.
 *
 * Why a key kept outside data_dir: a plain SHA-256 chain can be recomputed by anyone who can write
 * audit.jsonl (a tool that escapes into data_dir, a script in the workspace, a backup restored by
 * hand), so it proves nothing against them. Each line is instead sealed with HMAC-SHA256 under a
 * key they cannot read. The key lives where a program the runtime starts cannot see it: an
 * environment variable of the daemon (the sandbox gives a child only its env_allowlist), or a file
 * outside data_dir and outside the workspace, by default `$XDG_CONFIG_HOME/organism/audit.key`
 * (`~/.config/organism/audit.key`), under $HOME, which the run_command sandbox hides.
 *
 * Why HMAC over Ed25519-signed checkpoints: every line is sealed the moment it is written (no window
 * between checkpoints in which lines can be dropped), it costs one HMAC per line, and the same key
 * serves the daemon and `organism tools call` appending to the same file. The price is that verify
 * needs the secret key too (it runs where the daemon runs, with the same config).
 *
 * With no key configured the daemon creates the default key file at first start (mode 0600, its
 * folder 0700) and logs where it is, so the organism runs with no setup and is keyed from its
 * first record. `organism audit --verify` only reads keys; it never creates one.
 *
 * Key material: one or more keys, oldest first; the last one seals new records, earlier ones only
 * verify (that is rotation). In a file one key per line (`#` comments allowed); in the environment
 * separated by commas or white space. A key is at least 32 characters with no space or comma; the
 * generated ones are 64 hex digits (256 bits). Records name their key by id: the first 8 hex digits
 * of SHA-256 of the key.
 */
import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { schemaDefault } from '../config/schema.ts';
import { AuditError } from '../errors.ts';

export const DEFAULT_AUDIT_KEY_ENV = schemaDefault<string>('audit.key_env');
export const MIN_AUDIT_KEY_LENGTH = 32;

export interface AuditKey {
  /** First 8 hex digits of SHA-256 of the key; written in every record it seals. */
  id: string;
  secret: Buffer;
}

/** Where the keys come from, as the config says (all optional: defaults apply). */
export interface AuditKeyOptions {
  /** Environment variable holding the keys; wins over the file when set and not empty. */
  keyEnv?: string;
  /** Key file (absolute); default defaultAuditKeyFile(env). */
  keyFile?: string;
  /** data_dir and workspace: the key file must be outside both. */
  dataDir: string;
  workspace?: string;
  env?: NodeJS.ProcessEnv;
  /** Create the key file with a fresh key when it does not exist (the daemon, tools call). */
  create?: boolean;
}

/** The key options an organism's config gives (`audit.key_env`, `audit.key_file`, data_dir, workspace). */
export function auditKeyOptions(
  config: {
    organism: { data_dir: string; workspace: string };
    audit?: { key_env?: string; key_file?: string };
  },
  options: { env?: NodeJS.ProcessEnv; create?: boolean } = {},
): AuditKeyOptions {
  const audit = config.audit ?? {};
  return {
    ...(audit.key_env === undefined ? {} : { keyEnv: audit.key_env }),
    ...(audit.key_file === undefined ? {} : { keyFile: audit.key_file }),
    dataDir: config.organism.data_dir,
    workspace: config.organism.workspace,
    env: options.env ?? process.env,
    create: options.create ?? false,
  };
}

export function auditKeyId(secret: Buffer): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 8);
}

export function generateAuditKey(): string {
  return randomBytes(32).toString('hex');
}

/** `$XDG_CONFIG_HOME/organism/audit.key`, else `~/.config/organism/audit.key`. */
export function defaultAuditKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg?.startsWith('/') ? xdg : join(homedir(), '.config');
  return join(base, 'organism', 'audit.key');
}

/** Parses key material (file text or env value); throws AuditError naming `source` when a key is unfit. */
export function parseAuditKeys(text: string, source: string): AuditKey[] {
  const tokens = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .flatMap((line) => line.split(/[\s,]+/))
    .filter((token) => token.length > 0);
  if (tokens.length === 0) throw new AuditError('audit.key', `${source} holds no audit key`, { source });
  const keys = tokens.map((token, i) => {
    if (token.length < MIN_AUDIT_KEY_LENGTH) {
      throw new AuditError(
        'audit.key',
        `audit key ${i + 1} in ${source} is ${token.length} characters; it needs at least ${MIN_AUDIT_KEY_LENGTH} (generate one with: openssl rand -hex 32)`,
        { source },
      );
    }
    const secret = Buffer.from(token, 'utf8');
    return { id: auditKeyId(secret), secret };
  });
  return keys;
}

function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep));
}

/** The real path of `path`, following links in whatever part of it exists. */
async function realish(path: string): Promise<string> {
  const abs = resolve(path);
  try {
    return await realpath(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(await realish(parent), abs.slice(parent.length + 1));
  }
}

/**
 * Why `keyFile` may not hold the audit key (inside data_dir or the workspace, where whoever can
 * write the log can also read the key), or undefined. Lexical only; see assertKeyFileOutside.
 */
export function keyFileProblem(keyFile: string, dataDir: string, workspace?: string): string | undefined {
  const places: [string, string | undefined][] = [
    ['data_dir', dataDir],
    ['the workspace', workspace],
  ];
  for (const [name, dir] of places) {
    if (dir !== undefined && isInside(resolve(keyFile), resolve(dir))) {
      return `audit key file ${keyFile} is inside ${name} (${dir}); whoever can write the audit log could read the key there. Put it outside, e.g. ${defaultAuditKeyFile()}`;
    }
  }
  return undefined;
}

/** keyFileProblem on real paths too (a link from outside into data_dir counts as inside). */
async function assertKeyFileOutside(keyFile: string, dataDir: string, workspace?: string): Promise<void> {
  const problem =
    keyFileProblem(keyFile, dataDir, workspace) ??
    keyFileProblem(
      await realish(keyFile),
      await realish(dataDir),
      workspace === undefined ? undefined : await realish(workspace),
    );
  if (problem) throw new AuditError('audit.key', problem, { path: keyFile });
}

/** The keys, oldest first (the last seals new records), and where they came from. */
export class AuditKeyring {
  #keys: AuditKey[];
  readonly source: string;
  /** The file read (re-read by refresh), or undefined for the environment. */
  readonly file: string | undefined;
  /** True when this process created the key file. */
  readonly created: boolean;
  /** Set when the key file can be read by others than its owner. */
  readonly warning: string | undefined;

  constructor(keys: AuditKey[], source: string, file?: string, created = false, warning?: string) {
    if (keys.length === 0) throw new AuditError('audit.key', `${source} holds no audit key`);
    this.#keys = keys;
    this.source = source;
    this.file = file;
    this.created = created;
    this.warning = warning;
  }

  get keys(): readonly AuditKey[] {
    return this.#keys;
  }

  /** The key that seals new records. */
  get current(): AuditKey {
    return this.#keys.at(-1) as AuditKey;
  }

  /** Re-reads the key file (after a rotation by another process); true when it changed. */
  async refresh(): Promise<boolean> {
    if (this.file === undefined) return false;
    let keys: AuditKey[];
    try {
      keys = parseAuditKeys(await readFile(this.file, 'utf8'), this.file);
    } catch {
      return false;
    }
    const changed = keys.map((k) => k.id).join() !== this.#keys.map((k) => k.id).join();
    if (changed) this.#keys = keys;
    return changed;
  }
}

/**
 * Loads the audit keys: the environment variable when set, else the key file. Without `create`
 * a missing key file gives undefined (verify says which key it would need); with it, a fresh key.
 */
export async function loadAuditKeys(options: AuditKeyOptions): Promise<AuditKeyring | undefined> {
  const env = options.env ?? process.env;
  const name = options.keyEnv ?? DEFAULT_AUDIT_KEY_ENV;
  const value = env[name];
  if (value !== undefined && value.trim() !== '') {
    const source = `environment variable ${name}`;
    return new AuditKeyring(parseAuditKeys(value, source), source);
  }
  const file = options.keyFile ?? defaultAuditKeyFile(env);
  await assertKeyFileOutside(file, options.dataDir, options.workspace);
  let text: string | undefined;
  let created = false;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new AuditError(
        'audit.key',
        `cannot read the audit key file ${file}: ${(error as Error).message}`,
        {
          path: file,
        },
      );
    }
    if (!options.create) return undefined;
    created = await createKeyFile(file);
    text = await readFile(file, 'utf8');
  }
  const mode = (await stat(file)).mode & 0o777;
  const warning =
    mode & 0o077
      ? `audit key file ${file} has mode ${mode.toString(8)}; others may read it (chmod 600 ${file})`
      : undefined;
  return new AuditKeyring(parseAuditKeys(text, file), file, file, created, warning);
}

/**
 * Writes a fresh key to `file` unless it exists. The key is written to a private temp file and
 * hard-linked into place, so two processes starting at once agree on one complete key.
 */
async function createKeyFile(file: string): Promise<boolean> {
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temp, `${keyFileHeader()}${generateAuditKey()}\n`, { mode: 0o600, flag: 'wx' });
    try {
      await link(temp, file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    } finally {
      await rm(temp, { force: true });
    }
  } catch (error) {
    throw new AuditError(
      'audit.key',
      `cannot create the audit key file ${file}: ${(error as Error).message}. Set audit.key_file to a writable place outside data_dir, or put a key in $${DEFAULT_AUDIT_KEY_ENV} (openssl rand -hex 32)`,
      { path: file },
    );
  }
}

function keyFileHeader(): string {
  return '# Organism audit key(s), oldest first; the last one seals new records. Keep this file: verify needs it.\n';
}

/** Appends a fresh key to the key file (rotation); returns the old and new current key ids. */
export async function rotateAuditKeyFile(ring: AuditKeyring): Promise<{ from: string; to: string }> {
  if (ring.file === undefined) {
    throw new AuditError(
      'audit.key',
      `the audit keys come from the ${ring.source}; rotate there: append a new key after the current one, comma-separated (old keys keep verifying)`,
    );
  }
  const from = ring.current.id;
  const text = await readFile(ring.file, 'utf8');
  const lead = text === '' || text.endsWith('\n') ? '' : '\n';
  await writeFile(ring.file, `${lead}${generateAuditKey()}\n`, { flag: 'a', mode: 0o600 });
  await ring.refresh();
  return { from, to: ring.current.id };
}
