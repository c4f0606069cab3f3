/**
 * A lock the OS releases: a Unix socket that its holder listens on, in the folder it guards. Node
 * has no flock(2), and a pid written into a file is no lock: a process that dies leaves its pid
 * behind, and pids are reused (a container's daemon is pid 1 on every start, and pid 1 is always
 * alive). A listening socket ends with its process, however it ends (kill -9 included), and a
 * second starter can ask it who holds it:
 *
 *   - bind(2) the path succeeds: nothing is there, the lock is ours;
 *   - it fails (EADDRINUSE): connect(2). Connected: the holder is alive, and it answers one JSON
 *     line (its pid and what it chose to add, such as the daemon's URL). Refused (ECONNREFUSED: a
 *     socket nobody listens on any more, or a plain file such as an older version's pid file):
 *     stale, so it is removed and bound again.
 *
 * Two starters that both find a stale socket must not both remove it and bind (the second would
 * remove the first's live one): a takeover is done by one process at a time, under a short-lived
 * Linux abstract socket named after the lock's real path (also released by the OS), and the
 * socket is probed again under it. Abstract names belong to a network namespace: starters in
 * different namespaces (two containers sharing one volume) are not serialized there, and a process
 * squatting the name only delays a takeover by `takeoverWaitMs`. Elsewhere than Linux the takeover
 * is unguarded (a window of a few ms for two simultaneous starters after a crash).
 *
 * sun_path holds 107 bytes. On Linux the socket is bound and reached through
 * `/proc/self/fd/<fd of the folder>/<name>`, which is short whatever the folder's path; elsewhere a
 * path that does not fit is refused with the limit named.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  openSync,
  realpathSync,
  unlinkSync,
} from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { LockError } from '../errors.ts';

/** What the holder answers a probe: its pid, and what it added (the daemon: its URL). */
export interface LockHolder {
  pid: number;
  [key: string]: unknown;
}

export interface DirLockOptions {
  /** The folder the lock guards (it must exist); the socket is made in it. */
  dir: string;
  /** The socket's file name in `dir`. */
  name: string;
  /** How long a probe waits for a connected holder's answer (ms). */
  answerMs?: number;
  /** How long a takeover of a stale lock waits for another starter's takeover to end (ms). */
  takeoverWaitMs?: number;
  /** Runs between finding the lock stale and removing it (tests widen the race window with it). */
  beforeTakeover?: () => Promise<void>;
}

export function defaultDirLockOptions(): Required<Omit<DirLockOptions, 'dir' | 'name'>> {
  return { answerMs: 2000, takeoverWaitMs: 3000, beforeTakeover: async () => {} };
}

/** What a probe of a lock found. */
export type LockState =
  | { state: 'free' }
  | { state: 'stale' }
  /** `holder` undefined: connected, but no (readable) answer in time. */
  | { state: 'held'; holder: LockHolder | undefined }
  /** Not reachable from here (another user's, EACCES): whether it is held cannot be told. */
  | { state: 'unknown'; reason: string };

/** Locks held by this process, by real path: a second acquire here is refused without a probe. */
const heldHere = new Map<string, DirLock | undefined>();

const LINUX_FD_PATHS = process.platform === 'linux' && existsSync('/proc/self/fd');
/** sun_path is 108 bytes with its terminating NUL. */
const SUN_PATH_MAX = 107;
/** Tries of bind-or-probe before giving up on a path that keeps changing under us. */
const MAX_ROUNDS = 50;

export class DirLock {
  /** The socket's path (for messages). */
  readonly path: string;
  readonly #server: Server;
  readonly #dirFd: number | undefined;
  readonly #address: string;
  readonly #inode: { dev: number; ino: number };
  #extra: Record<string, unknown> = {};
  #released: Promise<void> | undefined;

  /** @internal made by acquireDirLock */
  constructor(path: string, server: Server, dirFd: number | undefined, address: string) {
    this.path = path;
    this.#server = server;
    this.#dirFd = dirFd;
    this.#address = address;
    const { dev, ino } = lstatSync(address);
    this.#inode = { dev, ino };
    server.on('connection', (socket) => {
      socket.on('error', () => {});
      socket.setTimeout(1000, () => socket.destroy());
      socket.end(`${JSON.stringify(this.holder())}\n`);
    });
  }

  /** What a probe is answered: this process's pid and what was announced. */
  holder(): LockHolder {
    return { ...this.#extra, pid: process.pid };
  }

  /** What a probe is told besides the pid (replaces what was set before). */
  announce(extra: Record<string, unknown>): void {
    this.#extra = { ...extra };
  }

  /** Stops listening and removes the socket, if the socket at the path is still this one. */
  release(): Promise<void> {
    this.#released ??= new Promise<void>((resolve) => {
      heldHere.delete(this.path);
      let ours = false;
      try {
        const now = lstatSync(this.#address);
        ours = now.dev === this.#inode.dev && now.ino === this.#inode.ino;
      } catch {}
      if (!ours) {
        // Closing would unlink whatever is at the path now (libuv removes a pipe's path on close):
        // leave the listener (unreachable, unreferenced) to the process's end instead.
        this.#closeDir();
        resolve();
        return;
      }
      this.#server.close(() => {
        this.#closeDir();
        resolve();
      });
    });
    return this.#released;
  }

  #closeDir(): void {
    if (this.#dirFd === undefined) return;
    try {
      closeSync(this.#dirFd);
    } catch {}
  }
}

/**
 * Takes the lock `name` in `dir`, taking over a stale one. Throws LockError `lock.held` (with the
 * holder's answer in `details.holder` when it gave one) while a live process holds it, and
 * `lock.io` when the socket cannot be made.
 */
export async function acquireDirLock(options: DirLockOptions): Promise<DirLock> {
  const opts = { ...defaultDirLockOptions(), ...options };
  const real = realDir(opts.dir);
  const path = join(real, opts.name);
  if (heldHere.has(path))
    throw held(path, { state: 'held', holder: heldHere.get(path)?.holder() ?? { pid: process.pid } });
  // Taken before the first await: two acquires in this process cannot both get past it.
  heldHere.set(path, undefined);
  let dirFd: number | undefined;
  try {
    dirFd = LINUX_FD_PATHS ? openDir(real) : undefined;
    const address = socketAddress(real, opts.name, dirFd);
    const server = await take(path, address, opts);
    chmodQuietly(address);
    const lock = new DirLock(path, server, dirFd, address);
    heldHere.set(path, lock);
    return lock;
  } catch (error) {
    heldHere.delete(path);
    if (dirFd !== undefined) closeSync(dirFd);
    throw error;
  }
}

/** Who holds the lock `name` in `dir`, asked as a second starter would (nothing is changed). */
export async function probeDirLock(dir: string, name: string, answerMs = 2000): Promise<LockState> {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return { state: 'free' };
  }
  let dirFd: number | undefined;
  try {
    dirFd = LINUX_FD_PATHS ? openDir(real) : undefined;
    return await probe(socketAddress(real, name, dirFd), answerMs);
  } catch (error) {
    return { state: 'unknown', reason: (error as Error).message };
  } finally {
    if (dirFd !== undefined) closeSync(dirFd);
  }
}

async function take(path: string, address: string, opts: Required<DirLockOptions>): Promise<Server> {
  const waitUntil = Date.now() + opts.takeoverWaitMs;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const server = await listen(address, path);
    if (server) return server;
    const found = await probe(address, opts.answerMs);
    if (found.state === 'held' || found.state === 'unknown') throw held(path, found);
    // Gone since the bind failed: try again. (A dangling symlink is there for bind, not for connect.)
    if (found.state === 'free' && !linkThere(address)) continue;
    // Stale: one taker at a time. Busy: another starter is taking it over now; look again shortly.
    const mutex = await takeoverMutex(path);
    if (mutex === 'busy' && Date.now() < waitUntil) {
      // Waiting on another's takeover is bounded by the time, not by the rounds.
      round--;
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 20));
      continue;
    }
    try {
      const again = await probe(address, opts.answerMs);
      if (again.state === 'held' || again.state === 'unknown') throw held(path, again);
      if (again.state === 'stale' || (again.state === 'free' && linkThere(address))) {
        await opts.beforeTakeover();
        removeStale(address, path);
      }
      const taken = await listen(address, path);
      if (taken) return taken;
    } finally {
      if (mutex !== 'busy' && mutex !== undefined) mutex.close();
    }
  }
  throw new LockError('lock.io', `cannot take the lock ${path}: it kept changing while it was taken`, {
    path,
  });
}

/** Listens on `address`; undefined when something is there already (EADDRINUSE). */
function listen(address: string, path: string): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') return resolve(undefined);
      // Some shared or network file systems (a host folder mounted into a VM) hold no sockets.
      const hint = ['EOPNOTSUPP', 'ENOTSUP', 'EPERM'].includes(error.code ?? '')
        ? ': the folder must be on a file system that can hold a Unix socket (not a network or host-shared mount)'
        : '';
      reject(
        new LockError(
          'lock.io',
          `cannot make the lock socket ${path}: ${error.code ?? error.message}${hint}`,
          {
            path,
          },
        ),
      );
    });
    server.listen(address, () => {
      // The lock must never keep the process alive on its own.
      server.unref();
      resolve(server);
    });
  });
}

/** Connects to `address`: refused is stale, absent is free, connected is held (with its answer). */
function probe(address: string, answerMs: number): Promise<LockState> {
  return new Promise((resolve) => {
    const socket = createConnection(address);
    let connected = false;
    let text = '';
    const done = (state: LockState) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(state);
    };
    const timer = setTimeout(() => done({ state: 'held', holder: undefined }), answerMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
    });
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > 4096) done({ state: 'held', holder: undefined });
    });
    socket.on('end', () => done({ state: 'held', holder: parseHolder(text) }));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (connected) return done({ state: 'held', holder: parseHolder(text) });
      switch (error.code) {
        case 'ENOENT':
          return done({ state: 'free' });
        // A socket nobody listens on, or not a socket at all (a plain file left by an older version).
        case 'ECONNREFUSED':
        case 'ENOTSOCK':
          return done({ state: 'stale' });
        // The backlog is full: someone listens.
        case 'EAGAIN':
          return done({ state: 'held', holder: undefined });
        default:
          return done({ state: 'unknown', reason: error.code ?? error.message });
      }
    });
  });
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text.trim()) as { pid?: unknown };
    if (typeof value === 'object' && value !== null && Number.isInteger(value.pid))
      return value as LockHolder;
  } catch {}
  return undefined;
}

/**
 * The takeover mutex: an abstract socket (Linux; it has no file, so nothing of it outlives its
 * holder). 'busy': another process holds it. undefined: not available here (the takeover goes
 * unguarded).
 */
function takeoverMutex(path: string): Promise<Server | 'busy' | undefined> {
  if (process.platform !== 'linux') return Promise.resolve(undefined);
  const digest = createHash('sha256').update(path).digest('hex').slice(0, 32);
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' ? 'busy' : undefined),
    );
    server.listen(`\0organism-lock-takeover-${digest}`, () => {
      server.unref();
      resolve(server);
    });
  });
}

/** A symbolic link at the address (unlink removes the link, never what it points to). */
function linkThere(address: string): boolean {
  try {
    return lstatSync(address).isSymbolicLink();
  } catch {
    return false;
  }
}

function removeStale(address: string, path: string): void {
  try {
    unlinkSync(address);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw new LockError(
      'lock.io',
      `cannot remove the stale lock ${path} (${code ?? (error as Error).message}): remove it by hand`,
      { path },
    );
  }
}

function held(path: string, found: LockState): LockError {
  const holder = found.state === 'held' ? found.holder : undefined;
  const who =
    holder === undefined
      ? found.state === 'unknown'
        ? `a process this user cannot ask (${found.reason})`
        : 'a process that does not answer'
      : holder.pid === process.pid
        ? 'this process'
        : `process ${holder.pid}`;
  return new LockError('lock.held', `${path} is held by ${who}`, { path, holder });
}

function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch (error) {
    throw new LockError(
      'lock.io',
      `cannot lock ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      { path: dir },
    );
  }
}

function openDir(dir: string): number {
  return openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
}

/** The address to bind or connect: short through /proc/self/fd on Linux, the path itself elsewhere. */
function socketAddress(real: string, name: string, dirFd: number | undefined): string {
  if (dirFd !== undefined) return `/proc/self/fd/${dirFd}/${name}`;
  const path = join(real, name);
  if (Buffer.byteLength(path) > SUN_PATH_MAX) {
    throw new LockError(
      'lock.io',
      `the lock socket path ${path} is ${Buffer.byteLength(path)} bytes; a Unix socket path holds at most ${SUN_PATH_MAX}: use a shorter data_dir`,
      { path },
    );
  }
  return path;
}

/** Only this user may ask the holder (the folder is usually private already). */
function chmodQuietly(address: string): void {
  try {
    chmodSync(address, 0o600);
  } catch {}
}
