/**
 * A synchronous append of a whole string, shared by the files the daemon appends lines to (the
 * journal's segments, the thread history on disk, the audit log): to the page cache a write costs a
 * few microseconds, where the thread pool's round trip costs more than the write.
 */
import { writeSync } from 'node:fs';

/**
 * Writes all of `text` at `fd` and returns its length in bytes. The string is written as it is (no
 * Buffer made); a short write (rare) goes on from where it stopped. Throws what the disk says.
 */
export function writeAllSync(fd: number, text: string): number {
  const written = writeSync(fd, text);
  const length = Buffer.byteLength(text);
  if (written < length) {
    const buffer = Buffer.from(text, 'utf8');
    for (let offset = written; offset < length; ) offset += writeSync(fd, buffer, offset);
  }
  return length;
}
