/**
 * The local API token: a random 256-bit token the daemon keeps in `<data_dir>/api-token` (0600, in
 * a data dir only its user may enter), made at the first start and reused after. It is the admin
 * credential of whoever can read the daemon's data dir: the CLI on the same machine sends it when
 * it talks to the daemon of that data dir, and `organism dashboard` prints a sign-in link carrying
 * it (as Jupyter does). With no auth.tokens it is the only credential, so a tool that reaches the
 * API over loopback (run_command with network: true) but cannot read the data dir (the sandbox
 * hides it, the file guard refuses it) changes nothing through it.
 *
 * The file is opened without following links and must be a regular file of this user with no
 * access for anyone else: one that others could read is replaced by a new token (the old one may
 * have leaked), with a warning.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, type FileHandle, lstat, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ServerError } from '../errors.ts';
import { reachable } from './address-file.ts';

export const LOCAL_TOKEN_FILE = 'api-token';

/** The principal name the local token stands for in logs, the audit and `decided_by`. */
export const LOCAL_TOKEN_NAME = 'local';

/** 32 random bytes, hex. */
const TOKEN = /^[0-9a-f]{64}$/;

export function localTokenPath(dataDir: string): string {
  return join(dataDir, LOCAL_TOKEN_FILE);
}

export interface LocalToken {
  token: string;
  path: string;
  /** True when this start made it (first start, or the old one was replaced). */
  created: boolean;
  /** What was wrong and mended (a data dir others could enter, a token file others could read). */
  warnings: string[];
}

/**
 * The data dir's token, made when there is none or the one there is unusable. Throws
 * ServerError('server.local_token') when it can be neither read nor written.
 */
export async function ensureLocalToken(dataDir: string): Promise<LocalToken> {
  const path = localTokenPath(dataDir);
  const warnings: string[] = [];
  await keepPrivate(dataDir, warnings);
  const found = await readTokenFile(path);
  if (found.token) return { token: found.token, path, created: false, warnings };
  if (found.problem) warnings.push(`${path} ${found.problem}: replaced with a new token`);
  const token = randomBytes(32).toString('hex');
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let handle: FileHandle | undefined;
  try {
    // O_EXCL: never through a link or a file someone else put there.
    handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    await handle.writeFile(`${token}\n`);
    await handle.sync();
    await handle.close();
    handle = undefined;
    // rename replaces a link at `path` itself, never what it points to.
    await rename(temp, path);
  } catch (error) {
    await handle?.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw new ServerError(
      'server.local_token',
      `cannot write the local API token ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      { path },
    );
  }
  return { token, path, created: true, warnings };
}

/** The token in `<dataDir>/api-token` when it is one this user alone can read, else undefined. For the CLI. */
export async function readLocalToken(dataDir: string): Promise<string | undefined> {
  return (await readTokenFile(localTokenPath(dataDir))).token;
}

async function readTokenFile(path: string): Promise<{ token?: string; problem?: string }> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    if (code === 'ELOOP') return { problem: 'is a symbolic link' };
    return { problem: `cannot be read (${code})` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { problem: 'is not a regular file' };
    if (typeof process.getuid === 'function' && info.uid !== process.getuid())
      return { problem: 'belongs to another user' };
    if ((info.mode & 0o077) !== 0)
      return { problem: `could be read by others (mode ${(info.mode & 0o777).toString(8)})` };
    if (info.size > 1024) return { problem: 'is not a token' };
    const text = (await handle.readFile('utf8')).trim();
    return TOKEN.test(text) ? { token: text } : { problem: 'is not a token' };
  } finally {
    await handle.close();
  }
}

/** A data dir others may enter loses those rights: the token, stores and history are private. */
async function keepPrivate(dataDir: string, warnings: string[]): Promise<void> {
  const info = await lstat(dataDir).catch(() => undefined);
  if (!info?.isDirectory() || (info.mode & 0o077) === 0) return;
  if (typeof process.getuid === 'function' && info.uid !== process.getuid()) return;
  await chmod(dataDir, info.mode & 0o700);
  warnings.push(
    `the data dir ${dataDir} was open to others (mode ${(info.mode & 0o777).toString(8)}): now ${(info.mode & 0o700).toString(8)}`,
  );
}

/**
 * The dashboard's address signed in with `token`: in the fragment, which the browser never sends
 * (no request line, log or Referer carries it); the page keeps it in the tab and drops it from the
 * address bar. A credential: printed for a person only, never logged.
 */
export function signedInLink(url: string, token: string): string {
  return `${reachable(url)}/#token=${encodeURIComponent(token)}`;
}
