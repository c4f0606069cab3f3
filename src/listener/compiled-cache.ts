/**
 * Compiled TypeScript user modules kept between starts, in the project's own
 * `node_modules/.cache/organism/` (where build tools keep their caches): a restart, or a reload
 * that changed nothing in a module, imports the compiled file without starting esbuild at all.
 *
 * An entry records every local file esbuild put into the module with a hash of its contents; it is
 * used only while every one of them is unchanged, so an edited helper recompiles its listener.
 * A module with no node_modules folder above it is not cached (nowhere private to put it).
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, type Stats } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

interface Entry {
  /** File name of the compiled module in the cache folder. */
  module: string;
  /** Every local file compiled into it: absolute path -> sha256 of its contents. */
  inputs: Record<string, string>;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * The cache folder for a module: `node_modules/.cache/organism` of the nearest folder above it that
 * has node_modules, when it is this user's. What is in it runs in the daemon, so a node_modules
 * someone else owns or everyone may write (one in a shared folder such as /tmp, above a project
 * that has none) would let them plant code in place of the module: no cache then.
 */
export function cacheDir(absPath: string): string | undefined {
  for (let dir = dirname(absPath); ; dir = dirname(dir)) {
    const modules = join(dir, 'node_modules');
    if (existsSync(modules)) {
      const cache = join(modules, '.cache', 'organism');
      return [modules, join(modules, '.cache'), cache].every(ours) ? cache : undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * True when `path` is absent, or is a folder of this user's that not everyone may write. (Group
 * write is let through: under umask 002 a user's own group does, and npm makes node_modules so.)
 */
function ours(path: string): boolean {
  let info: Stats;
  try {
    info = lstatSync(path);
  } catch {
    return true; // made by us when first stored
  }
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) return false;
  return !info.isSymbolicLink() && (info.mode & 0o002) === 0;
}

function entryFile(dir: string, absPath: string): string {
  return join(dir, `${sha256(absPath).slice(0, 16)}.json`);
}

async function hashes(files: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const file of files) out[file] = sha256(await readFile(file));
  return out;
}

/** The cached compiled module for absPath, when every file in it is as it was compiled. */
export async function cachedModule(dir: string, absPath: string): Promise<string | undefined> {
  let entry: Entry;
  try {
    entry = JSON.parse(await readFile(entryFile(dir, absPath), 'utf8')) as Entry;
    const now = await hashes(Object.keys(entry.inputs));
    if (Object.entries(entry.inputs).some(([file, hash]) => now[file] !== hash)) return undefined;
  } catch {
    return undefined; // none yet, unreadable, or an input gone: compile
  }
  const module = join(dir, entry.module);
  return existsSync(module) ? module : undefined;
}

/** Stores a compiled module; returns its file, or undefined when the cache cannot be written. */
export async function storeModule(
  dir: string,
  absPath: string,
  code: string,
  inputs: string[],
): Promise<string | undefined> {
  try {
    await mkdir(dir, { recursive: true });
    const name = `${sha256(absPath).slice(0, 16)}.${sha256(code).slice(0, 16)}.mjs`;
    const previous = await readFile(entryFile(dir, absPath), 'utf8')
      .then((text) => (JSON.parse(text) as Entry).module)
      .catch(() => undefined);
    await writeAtomically(join(dir, name), code);
    const entry: Entry = { module: name, inputs: await hashes(inputs) };
    await writeAtomically(entryFile(dir, absPath), JSON.stringify(entry));
    // The previous compile of this module is stale now (a loaded copy stays in memory regardless).
    if (previous !== undefined && previous !== name) await rm(join(dir, previous), { force: true });
    return join(dir, name);
  } catch {
    return undefined; // a read-only project: compile each time instead
  }
}

/**
 * Written beside and renamed into place: daemons of one project (tests, several workers) starting
 * at once read a complete file or none, never one another writes at that moment.
 */
async function writeAtomically(path: string, data: string): Promise<void> {
  const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await writeFile(temp, data);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
