/**
 * Atomic file replacement: write a temp file in the same folder, fsync, rename over the target.
 * A reader sees the old file or the new one, never half of one, and a crash leaves at worst a stray
 * `.name.<id>.tmp`. Writers to one path in this process queue up behind each other, so two appends
 * cannot lose one another's bytes.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { inDir, type OpenDir } from './fs-fd.ts';

const queues = new Map<string, Promise<unknown>>();

/** Runs `task` after every earlier task for the same key has finished. */
export async function serialized<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.catch(() => {}).then(task);
  queues.set(key, next);
  try {
    return await next;
  } finally {
    if (queues.get(key) === next) queues.delete(key);
  }
}

/**
 * Replaces `name` in the open folder `dir` with `parts` (concatenated) atomically; `mode` is the new
 * file's permission bits. The temp file is created, renamed and (on any failure) removed by names
 * taken inside the folder's descriptor, never by a path from the root, so all three happen in the
 * one folder that was checked, even if its path is swapped for a symbolic link meanwhile.
 */
export async function writeAtomicIn(
  dir: OpenDir,
  name: string,
  parts: readonly Uint8Array[],
  mode: number,
): Promise<void> {
  const temp = inDir(dir, `.${name}.${randomUUID().slice(0, 8)}.tmp`);
  // O_EXCL: never write through something that appeared at the temp name.
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    try {
      for (const part of parts) {
        let done = 0;
        while (done < part.length) {
          const { bytesWritten } = await handle.write(part, done, part.length - done);
          done += bytesWritten;
        }
      }
      // open() applied the umask; the target's own bits are kept on overwrite.
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, inDir(dir, name));
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}
