/**
 * Revoked tools: a JSON file (`{"version":1,"revoked":{"<tool>":{"reason":"...","time":"..."}}}`)
 * written atomically by `organism tools revoke|unrevoke`, read by the runtime at start and polled
 * for changes, so a revocation holds across restarts and reaches a running daemon within seconds.
 */
import { readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { RevocationError } from '../errors.ts';

export interface Revocation {
  reason: string;
  time: string;
}

export type Revocations = Record<string, Revocation>;

interface RevocationsFile {
  version: 1;
  revoked: Revocations;
}

function parse(text: string, path: string): Revocations {
  let data: RevocationsFile;
  try {
    data = JSON.parse(text) as RevocationsFile;
  } catch (error) {
    throw new RevocationError(`revocations file ${path} is not valid JSON: ${(error as Error).message}`, {
      path,
    });
  }
  if (
    data === null ||
    typeof data !== 'object' ||
    typeof data.revoked !== 'object' ||
    data.revoked === null
  ) {
    throw new RevocationError(`revocations file ${path} must be {"version": 1, "revoked": {...}}`, { path });
  }
  const out: Revocations = Object.create(null) as Revocations;
  for (const [tool, entry] of Object.entries(data.revoked)) {
    if (entry === null || typeof entry !== 'object' || typeof entry.reason !== 'string') {
      throw new RevocationError(`revocations file ${path}: revoked.${tool} needs a "reason" string`, {
        path,
      });
    }
    out[tool] = { reason: entry.reason, time: typeof entry.time === 'string' ? entry.time : '' };
  }
  return out;
}

/** The revocations in the file; a missing file revokes nothing. */
export async function readRevocations(path: string): Promise<Revocations> {
  try {
    return parse(await readFile(path, 'utf8'), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
}

function readRevocationsSync(path: string): Revocations {
  try {
    return parse(readFileSync(path, 'utf8'), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
}

export async function writeRevocations(path: string, revoked: Revocations): Promise<void> {
  const body: RevocationsFile = { version: 1, revoked };
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, `${JSON.stringify(body, null, 2)}\n`);
  await rename(temp, path);
}

/** Adds (or replaces) a revocation; returns the new set. */
export async function revokeTool(
  path: string,
  tool: string,
  reason: string,
  now = new Date(),
): Promise<Revocations> {
  const revoked = await readRevocations(path);
  revoked[tool] = { reason, time: now.toISOString() };
  await writeRevocations(path, revoked);
  return revoked;
}

/** Removes a revocation; returns whether the tool had been revoked. */
export async function unrevokeTool(path: string, tool: string): Promise<boolean> {
  const revoked = await readRevocations(path);
  if (!(tool in revoked)) return false;
  delete revoked[tool];
  await writeRevocations(path, revoked);
  return true;
}

export interface RevocationWatcherOptions {
  path: string;
  /** How often the file's stat is polled (ms). The issue asks for changes within 10 s. */
  pollMs: number;
  /** A file that cannot be parsed keeps the last good set in force; this says so. */
  warn(message: string): void;
}

/**
 * The revocations in force, kept current by polling the file's stat (an unref'd timer, so it never
 * keeps the process alive). Polling rather than fs.watch: it sees atomic renames, works on every
 * file system, and costs one stat per interval.
 */
export class RevocationWatcher {
  readonly #options: RevocationWatcherOptions;
  #revoked: Revocations;
  #signature: string;
  #timer: NodeJS.Timeout | undefined;

  /** Reads the file synchronously once; throws RevocationError if it exists and is invalid. */
  constructor(options: RevocationWatcherOptions) {
    this.#options = options;
    this.#signature = this.#stat();
    this.#revoked = readRevocationsSync(options.path);
    this.#timer = setInterval(() => this.poll(), options.pollMs);
    this.#timer.unref();
  }

  #stat(): string {
    try {
      const info = statSync(this.#options.path);
      return `${info.ino}:${info.size}:${info.mtimeMs}`;
    } catch {
      return 'absent';
    }
  }

  /** Re-reads the file if its stat changed. Called by the timer; tests may call it directly. */
  poll(): void {
    const signature = this.#stat();
    if (signature === this.#signature) return;
    try {
      this.#revoked = readRevocationsSync(this.#options.path);
      this.#signature = signature;
    } catch (error) {
      // Keep the last good set: a half-edited file must not un-revoke everything.
      this.#signature = signature;
      this.#options.warn(`${(error as Error).message}; keeping the previous revocations`);
    }
  }

  /** The revocation of a tool, if any. */
  get(tool: string): Revocation | undefined {
    return Object.hasOwn(this.#revoked, tool) ? this.#revoked[tool] : undefined;
  }

  all(): Revocations {
    return { ...this.#revoked };
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
