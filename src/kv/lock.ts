/**
 * The embedded store's folder lock: a `LOCK` file holding the owner's pid. Two processes appending
 * to one log would interleave records, so a second opener is refused while the owner lives. A lock
 * left by a crashed or killed owner (its pid is gone) is stale and taken over, so a `kill -9` never
 * needs a hand-made cleanup before the next start.
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { KvError } from '../errors.ts';

const LOCK = 'LOCK';
/** Folders opened by a live store in this process: a second open would interleave two logs. */
const openDirs = new Set<string>();

export function acquireLock(dir: string): void {
  const path = join(dir, LOCK);
  if (openDirs.has(dir)) {
    throw new KvError('kv.locked', `the kv store in ${dir} is already open in this process`, { dir });
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new KvError('kv.io', `cannot create ${path}: ${(err as Error).message}`, undefined, {
        cause: err,
      });
    }
    let owner = Number.NaN;
    try {
      owner = Number.parseInt(readLockSync(path), 10);
    } catch {}
    if (Number.isInteger(owner) && owner !== process.pid && alive(owner)) {
      throw new KvError(
        'kv.locked',
        `the kv store in ${dir} is in use by process ${owner}; stop it or configure kv.url to share a Redis store`,
        { dir, pid: owner },
      );
    }
    // The owner is gone (crashed, killed): the lock is stale, take it over.
    fd = openSync(path, 'w');
  }
  try {
    writeSync(fd, String(process.pid));
  } finally {
    closeSync(fd);
  }
  openDirs.add(dir);
}

function readLockSync(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(32);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function releaseLock(dir: string): void {
  if (!openDirs.delete(dir)) return;
  try {
    // Only remove a lock that is still ours.
    if (Number.parseInt(readLockSync(join(dir, LOCK)), 10) === process.pid) unlinkSync(join(dir, LOCK));
  } catch {
    // Already gone or unreadable: nothing of ours to remove.
  }
}

/** True while a process with this pid exists (EPERM: it does, as another user's). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
