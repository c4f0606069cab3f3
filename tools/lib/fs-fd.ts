/**
 * Acting on what was checked, not on a name that may lead elsewhere by now.
 *
 * resolveToolPath (fs-path.ts) checks a path's real location, but between that check and the open
 * another process can swap a folder on the way for a symbolic link to somewhere else; `O_NOFOLLOW`
 * guards only the last component. Node has no openat(), so the file tools do this instead:
 *
 * - open a folder (only a folder: `O_DIRECTORY`, `O_PATH`, no effect), then ask the kernel where
 *   the descriptor really is (`readlink /proc/self/fd/N`) and check *that* path; whatever the
 *   swapper did, that is the folder the tool reads from, lists or writes in;
 * - name things inside an open folder as `/proc/self/fd/N/<name>`: the kernel resolves that to
 *   the folder held by descriptor N and looks `<name>` up in it, which is openat() by another name.
 *   A file opened, a temp file created, renamed and removed that way stays in the checked folder.
 *
 * Without /proc (not Linux) a folder is named by its real path and a descriptor's path is found by
 * resolving the name again and comparing device and inode: a swap between open and check is still
 * caught, a swap there and back in between is not. The sandboxed deployment is Linux, where that
 * weaker fallback is never used.
 */
import { constants, existsSync } from 'node:fs';
import { type FileHandle, lstat, open, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : undefined;

/**
 * O_PATH (Linux): a folder opened only to name things inside it. Such an open has no effect of its
 * own and needs no read permission on the folder (a folder one may pass through but not list still
 * works). The value is the kernel's generic one, shared by the architectures Node runs on; 0 (a
 * plain read-only open) where /proc is missing.
 */
const O_PATH = PROC_FD && process.platform === 'linux' ? 0o10000000 : 0;

/** A folder held open, with the real path it had when it was last checked. */
export interface OpenDir {
  handle: FileHandle;
  real: string;
}

/** The kernel's name for an open descriptor's file: where it really is, symlinks resolved. */
export async function realPathOfFd(handle: FileHandle, openedAs: string): Promise<string> {
  if (PROC_FD) return readlink(`${PROC_FD}/${handle.fd}`);
  const real = await realpath(openedAs);
  const [held, named] = await Promise.all([handle.stat(), stat(real)]);
  if (held.dev !== named.dev || held.ino !== named.ino) {
    throw Object.assign(new Error(`${openedAs} changed while it was opened`), { code: 'ELOOP' });
  }
  return real;
}

/** A path for `name` inside the folder `dir` holds (the folder itself without a name), as openat() would see it. */
export function inDir(dir: OpenDir, name?: string): string {
  const base = PROC_FD ? `${PROC_FD}/${dir.handle.fd}` : dir.real;
  return name === undefined ? base : path.join(base, name);
}

/**
 * Opens the folder at `where` without following a link in its last component (`O_NONBLOCK`: a
 * FIFO there must not hang the call) and returns it with its real path, refreshed from the
 * descriptor. Anything else is refused: ENOTDIR, or ELOOP for a symbolic link. Only a folder is
 * ever opened here, so even a `where` that leads somewhere unexpected is opened without effect;
 * whoever calls this checks `real` before using the folder.
 */
export async function openDir(where: string): Promise<OpenDir> {
  const handle = await open(
    where,
    O_PATH | constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch(async (error: NodeJS.ErrnoException) => {
    // With O_DIRECTORY a link in the last place is ENOTDIR; say what it is (fs-errors: ELOOP).
    if (error.code === 'ENOTDIR' && (await lstat(where).catch(() => undefined))?.isSymbolicLink()) {
      error.code = 'ELOOP';
    }
    throw error;
  });
  try {
    return { handle, real: await realPathOfFd(handle, where) };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}
