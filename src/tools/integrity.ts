/**
 * Tool integrity: a manifest of SHA-256 hashes of the tool module files, signed with Ed25519.
 * `organism tools sign` writes it; the runtime verifies the signature and every hash at start and,
 * before each call, re-checks cheaply: a stat of the module (the file is re-hashed only when its
 * mtime, size or inode moved) and the identity of the registered `run` function. No manifest means
 * the organism runs unsigned (one warning), so the default organism works with no set-up.
 *
 * What is covered: each tool's own module file, the local helper modules it imports (tools/lib/...,
 * librarian/...; see module-closure.ts), and its registered function. The runtime in src/ and the
 * dependencies in node_modules/ are not: they are the trusted base the check itself runs on.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign as signBytes,
  verify as verifyBytes,
} from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { access, chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { IntegrityError } from '../errors.ts';
import { canonicalJson } from './canonical.ts';
import { PACKAGE_ROOT } from './catalog.ts';
import { moduleClosure } from './module-closure.ts';
import type { RegisteredTool } from './registry.ts';

export const MANIFEST_VERSION = 1;
export const PRIVATE_KEY_FILE = 'tools-signing.key';
export const PUBLIC_KEY_FILE = 'tools-signing.pub';

export interface ManifestEntry {
  /** Module path relative to the manifest's folder (informative; entries are matched by tool name). */
  module: string;
  sha256: string;
  /** SHA-256 of each local helper module the tool imports, by path relative to the manifest's folder. */
  imports?: Record<string, string>;
}

export interface Manifest {
  version: number;
  algorithm: 'ed25519';
  created: string;
  /** First 16 hex digits of the SHA-256 of the public key (DER), to tell keys apart. */
  key_id: string;
  tools: Record<string, ManifestEntry>;
  /** Base64 Ed25519 signature over the canonical JSON of every other member. */
  signature: string;
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

/** Reads a private key (PEM, PKCS#8) from a file. */
export async function readPrivateKey(path: string): Promise<KeyObject> {
  try {
    const key = createPrivateKey(await readFile(path));
    if (key.asymmetricKeyType !== 'ed25519')
      throw new Error(`it is a ${key.asymmetricKeyType} key, not ed25519`);
    return key;
  } catch (error) {
    throw new IntegrityError(`cannot use signing key ${path}: ${(error as Error).message}`, { path });
  }
}

/** Parses a public key given as PEM text or as base64 of the SPKI DER bytes. */
export function parsePublicKey(text: string, where: string): KeyObject {
  try {
    const trimmed = text.trim();
    const key = trimmed.startsWith('-----BEGIN')
      ? createPublicKey(trimmed)
      : createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ed25519')
      throw new Error(`it is a ${key.asymmetricKeyType} key, not ed25519`);
    return key;
  } catch (error) {
    throw new IntegrityError(
      `the public key in ${where} is not a usable Ed25519 key: ${(error as Error).message}`,
    );
  }
}

/**
 * The signing key in the data dir, generating the pair on first use. The private key file is
 * written with mode 0600; the public key beside it is what the runtime trusts by default.
 */
export async function ensureSigningKey(
  dataDir: string,
): Promise<{ privateKey: KeyObject; path: string; created: boolean }> {
  const path = join(dataDir, PRIVATE_KEY_FILE);
  const exists = await access(path).then(
    () => true,
    () => false,
  );
  if (exists) return { privateKey: await readPrivateKey(path), path, created: false };
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  await chmod(path, 0o600);
  await writeFile(join(dataDir, PUBLIC_KEY_FILE), publicKey.export({ type: 'spki', format: 'pem' }));
  return { privateKey, path, created: true };
}

function signedPart(manifest: Omit<Manifest, 'signature'> | Manifest): string {
  const { signature: _ignored, ...rest } = manifest as Manifest;
  return canonicalJson(rest);
}

/**
 * Builds and signs a manifest for the given tools (name and module file each). A tool with its own
 * `root` (a user's tool_modules: their project's folder) has its helpers followed under that root.
 */
export function buildManifest(
  tools: ReadonlyArray<{ name: string; module: string; root?: string }>,
  privateKey: KeyObject,
  manifestPath: string,
  root: string,
): Manifest {
  const rel = (file: string) => relative(dirname(manifestPath), file).split(sep).join('/');
  const entries: Record<string, ManifestEntry> = {};
  for (const tool of tools) {
    const imports: Record<string, string> = {};
    const closure =
      tool.root === undefined
        ? moduleClosure(tool.module, root)
        : moduleClosure(tool.module, tool.root, ['node_modules']);
    for (const file of closure) imports[rel(file)] = sha256File(file);
    entries[tool.name] = { module: rel(tool.module), sha256: sha256File(tool.module), imports };
  }
  const unsigned = {
    version: MANIFEST_VERSION,
    algorithm: 'ed25519' as const,
    created: new Date().toISOString(),
    key_id: keyId(createPublicKey(privateKey)),
    tools: entries,
  };
  const signature = signBytes(null, Buffer.from(signedPart(unsigned), 'utf8'), privateKey).toString('base64');
  return { ...unsigned, signature };
}

/** Writes the manifest atomically (temp file, then rename). */
export async function writeManifest(path: string, manifest: Manifest): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temp, path);
}

export interface IntegrityOptions {
  manifestPath: string;
  /** Trusted public key; undefined when none is configured (a present manifest then fails closed). */
  publicKey: KeyObject | undefined;
  /** Where the key was looked for, for the error message. */
  publicKeyHint: string;
  /** `code` is UNSIGNED_WARNING for the unsigned-organism notice (a CLI may leave it out). */
  warn(message: string, code?: string): void;
  /** Called once per tool and reason when a check fails, so a threat record is written. */
  threat(tool: string, reason: string, module: string | undefined): void;
}

/** The code `warn` gets with the notice that user tools are not signed. */
export const UNSIGNED_WARNING = 'tools.unsigned';

/** Manifest paths whose unsigned notice this process has given (once per start, not per reload). */
const warnedUnsigned = new Set<string>();

interface FileState {
  mtimeMs: number;
  size: number;
  ino: number;
  ok: boolean;
}

export class IntegrityChecker {
  readonly #options: IntegrityOptions;
  /** undefined: unsigned organism; string: the manifest itself is unusable (every tool refused). */
  #manifest: Manifest | undefined;
  #broken: string | undefined;
  readonly #files = new Map<string, FileState>();
  readonly #reported = new Set<string>();
  /** No manifest, and no user tool warned about yet. */
  #unsigned = false;

  private constructor(options: IntegrityOptions) {
    this.#options = options;
  }

  /** Reads and verifies the manifest. Never throws for a bad manifest: it fails closed instead. */
  static async load(options: IntegrityOptions): Promise<IntegrityChecker> {
    const checker = new IntegrityChecker(options);
    let text: string;
    try {
      text = await readFile(options.manifestPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        checker.#fail(`cannot read tool manifest ${options.manifestPath}: ${(error as Error).message}`);
        return checker;
      }
      // Said once the first user tool is checked (see #unsignedUserTool), not here: the built-in
      // tools ship with the package, and an organism with none of its own has nothing to sign.
      checker.#unsigned = true;
      return checker;
    }
    let manifest: Manifest;
    try {
      manifest = JSON.parse(text) as Manifest;
      if (
        manifest?.version !== MANIFEST_VERSION ||
        typeof manifest.signature !== 'string' ||
        typeof manifest.tools !== 'object'
      ) {
        throw new Error(`expected version ${MANIFEST_VERSION} with tools and signature`);
      }
    } catch (error) {
      checker.#fail(
        `tool manifest ${options.manifestPath} is not a valid manifest: ${(error as Error).message}`,
      );
      return checker;
    }
    if (!options.publicKey) {
      checker.#fail(
        `tool manifest ${options.manifestPath} is present but no public key is configured (${options.publicKeyHint})`,
      );
      return checker;
    }
    const good = verifyBytes(
      null,
      Buffer.from(signedPart(manifest), 'utf8'),
      options.publicKey,
      Buffer.from(manifest.signature, 'base64'),
    );
    if (!good) {
      checker.#fail(
        `tool manifest ${options.manifestPath} has a bad signature (tampered, or signed with another key)`,
      );
      return checker;
    }
    checker.#manifest = manifest;
    return checker;
  }

  get signed(): boolean {
    return this.#manifest !== undefined;
  }

  #fail(reason: string): void {
    this.#broken = reason;
    this.#options.warn(reason);
    this.#report('*', reason, undefined);
  }

  #report(tool: string, reason: string, module: string | undefined): void {
    const key = `${tool}\u0000${reason}`;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#options.threat(tool, reason, module);
  }

  /** Why the tool fails integrity, or null when it passes. Cheap when nothing changed. */
  check(tool: RegisteredTool): string | null {
    if (this.#unsigned) this.#unsignedUserTool(tool);
    const reason = this.#reason(tool);
    if (reason !== null) this.#report(tool.definition.name, reason, tool.module);
    return reason;
  }

  /**
   * No manifest, and `tool` is the organism's own (its module outside Organism's package): warned
   * once per process and manifest, so a reload or the next call does not repeat it.
   */
  #unsignedUserTool(tool: RegisteredTool): void {
    if (!tool.module || tool.module.startsWith(PACKAGE_ROOT + sep)) return;
    this.#unsigned = false;
    const path = this.#options.manifestPath;
    if (warnedUnsigned.has(path)) return;
    warnedUnsigned.add(path);
    this.#options.warn(
      `no tool manifest at ${path}: tool modules are not integrity-checked (run 'organism tools sign' to sign them)`,
      UNSIGNED_WARNING,
    );
  }

  #reason(tool: RegisteredTool): string | null {
    if (this.#broken !== undefined) return this.#broken;
    const manifest = this.#manifest;
    if (!manifest) return null;
    const name = tool.definition.name;
    if (tool.definition.run !== tool.run)
      return `tool ${name}: its run function was replaced after it was registered`;
    const entry = manifest.tools[name];
    if (!entry) return `tool ${name} is not in the signed manifest ${this.#options.manifestPath}`;
    if (!tool.module) return `tool ${name} has no module file to check against the signed manifest`;
    const own = this.#fileReason(name, 'module', tool.module, entry.sha256);
    if (own !== null) return own;
    const base = dirname(this.#options.manifestPath);
    for (const [file, sha256] of Object.entries(entry.imports ?? {})) {
      const reason = this.#fileReason(name, 'helper module', resolve(base, file), sha256);
      if (reason !== null) return reason;
    }
    return null;
  }

  /** Whether `file` still hashes to `sha256`; re-hashed only when its mtime, size or inode moved. */
  #fileReason(tool: string, what: string, file: string, sha256: string): string | null {
    let info: { mtimeMs: number; size: number; ino: number };
    try {
      info = statSync(file);
    } catch (error) {
      return `tool ${tool}: its ${what} ${file} cannot be read (${(error as NodeJS.ErrnoException).code})`;
    }
    const changed = `tool ${tool}: its ${what} ${file} changed since it was signed`;
    const cached = this.#files.get(file);
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size && cached.ino === info.ino) {
      return cached.ok ? null : changed;
    }
    let ok: boolean;
    try {
      ok = sha256File(file) === sha256;
    } catch {
      ok = false;
    }
    this.#files.set(file, { mtimeMs: info.mtimeMs, size: info.size, ino: info.ino, ok });
    return ok ? null : changed;
  }
}
