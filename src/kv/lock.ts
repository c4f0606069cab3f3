/**
 * The embedded store's folder lock: two processes appending to one log would interleave records,
 * so a second opener is refused while the owner lives. It is the lock the OS releases
 * (src/storage/dir-lock.ts), a socket named `LOCK` in the folder: a store left by a crashed or
 * killed owner is taken over at once, and a `LOCK` file from an older version or a dead container
 * (a pid, say 1, that some other process has now) blocks nothing.
 */
import { KvError, LockError } from '../errors.ts';
import { acquireDirLock, type DirLock } from '../storage/dir-lock.ts';

const LOCK = 'LOCK';

export async function acquireLock(dir: string): Promise<DirLock> {
  try {
    return await acquireDirLock({ dir, name: LOCK });
  } catch (error) {
    if (!(error instanceof LockError)) throw error;
    if (error.code === 'lock.io') throw new KvError('kv.io', error.message, { dir }, { cause: error });
    const pid = (error.details?.holder as { pid?: number } | undefined)?.pid;
    const who =
      pid === process.pid
        ? 'already open in this process'
        : `in use by ${pid === undefined ? 'another process' : `process ${pid}`}`;
    throw new KvError(
      'kv.locked',
      `the kv store in ${dir} is ${who}; stop it or configure kv.url to share a Redis store`,
      { dir, ...(pid === undefined ? {} : { pid }) },
      { cause: error },
    );
  }
}
