/**
 * One daemon per data dir, and where it listens. The daemon holds `<data_dir>/daemon.sock`, the lock
 * the OS releases (src/storage/dir-lock.ts), from before it opens anything in its data dir until it
 * has closed everything: a second `organism run` on the same data dir is refused at once, with the
 * pid and URL the holder answers; a socket or file left by a daemon that died (kill -9, a container
 * whose daemon was pid 1) is taken over.
 *
 * `<data_dir>/daemon.json` says where the daemon listens, for tools that read files; it is written
 * once the HTTP server is listening (the real bound port) and removed at a clean shutdown, both by
 * the lock holder only, so a refused starter never touches the running daemon's file. The CLI asks
 * the lock itself (liveDaemonAddress): a daemon.json left behind by a daemon that died is ignored,
 * whatever process has its pid now.
 */
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LockError } from '../errors.ts';
import { acquireDirLock, type DirLock, probeDirLock } from '../storage/dir-lock.ts';

export const ADDRESS_FILE = 'daemon.json';
/** The daemon's lock socket in its data dir. */
export const DAEMON_LOCK = 'daemon.sock';

export interface DaemonAddress {
  url: string;
  pid: number;
  started: string;
}

export function addressFilePath(dataDir: string): string {
  return join(dataDir, ADDRESS_FILE);
}

/** The data dir, held by this process: what only the holder may do there. */
export interface DataDirClaim {
  /** The data dir, as it was given. */
  readonly dataDir: string;
  /** The HTTP server listens at `url`: tell probes and write daemon.json. */
  listening(url: string): Promise<void>;
  /** The HTTP server closed: daemon.json goes (the lock is kept until release). */
  unlisten(): Promise<void>;
  /** Lets the data dir go (removing daemon.json if still there). */
  release(): Promise<void>;
}

/**
 * Takes the data dir's lock. Throws LockError `lock.held` with one line, `already running, pid N at
 * URL (data_dir D)`, while another daemon holds it.
 */
export async function claimDataDir(dataDir: string): Promise<DataDirClaim> {
  let lock: DirLock;
  try {
    lock = await acquireDirLock({ dir: dataDir, name: DAEMON_LOCK });
  } catch (error) {
    if (error instanceof LockError && error.code === 'lock.held') throw alreadyRunning(dataDir, error);
    throw error;
  }
  const started = new Date().toISOString();
  let url: string | undefined;
  lock.announce({ started });
  const unlisten = async () => {
    if (url === undefined) return;
    const was = url;
    url = undefined;
    lock.announce({ started });
    await removeAddressFile(dataDir, was);
  };
  return {
    dataDir,
    async listening(at) {
      url = reachable(at);
      lock.announce({ url, started });
      await writeAddressFile(dataDir, url, started);
    },
    unlisten,
    async release() {
      await unlisten().catch(() => {});
      await lock.release();
    },
  };
}

function alreadyRunning(dataDir: string, error: LockError): LockError {
  const holder = error.details?.holder as { pid?: number; url?: unknown } | undefined;
  const where = `(data_dir ${dataDir})`;
  const message =
    holder?.pid === undefined
      ? `already running: ${error.message} ${where}`
      : typeof holder.url === 'string'
        ? `already running, pid ${holder.pid} at ${holder.url} ${where}`
        : `already running, pid ${holder.pid}, still starting ${where}`;
  return new LockError(
    'lock.held',
    message,
    { data_dir: dataDir, pid: holder?.pid, url: holder?.url },
    { cause: error },
  );
}

/** Writes the address (atomically: a reader never sees half a file). */
async function writeAddressFile(dataDir: string, url: string, started: string): Promise<void> {
  const file = addressFilePath(dataDir);
  const address: DaemonAddress = { url, pid: process.pid, started };
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(address)}\n`, { mode: 0o644 });
  await rename(temp, file);
}

/** Removes the file if it is still this daemon's (belt and braces: only the lock holder calls this). */
async function removeAddressFile(dataDir: string, url: string): Promise<void> {
  const file = addressFilePath(dataDir);
  const current = await readAddress(file);
  if (current?.pid !== process.pid || current.url !== url) return;
  await unlink(file).catch(() => {});
}

/**
 * The address of the daemon running on this data dir now, as its lock answers it; undefined when
 * none is (nobody holds the lock: a daemon.json there is a dead daemon's), or it is not listening
 * yet. Only when the lock cannot be asked (another user's daemon) is daemon.json taken as it is.
 */
export async function liveDaemonAddress(dataDir: string): Promise<DaemonAddress | undefined> {
  const found = await probeDirLock(dataDir, DAEMON_LOCK);
  if (found.state === 'unknown') return readAddress(addressFilePath(dataDir));
  if (found.state !== 'held' || found.holder === undefined) return undefined;
  const { pid, url, started } = found.holder;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) return undefined;
  return { url, pid, started: typeof started === 'string' ? started : '' };
}

async function readAddress(file: string): Promise<DaemonAddress | undefined> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  const { url, pid, started } = (data ?? {}) as Partial<DaemonAddress>;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) return undefined;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  return { url, pid, started: typeof started === 'string' ? started : '' };
}

/** A daemon on every interface (0.0.0.0, ::) is reached on this machine's loopback. */
export function reachable(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  else if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.origin;
}
