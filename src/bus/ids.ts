/**
 * Ids for messages and frames: unique across processes and restarts (a random boot prefix) yet
 * far cheaper than a UUID per hop. Thread ids, which callers see, stay random UUIDs.
 */
import { randomUUID } from 'node:crypto';

const BOOT = randomUUID().slice(0, 13);
let counter = 0;
/**
 * Joined, not concatenated: `${BOOT}-${n}` is a tree of two-part strings (V8 keeps a concatenation
 * of 13 characters or more as one), ~40 bytes more per id than the flat string join makes, and ids
 * are kept by every frame, message and history entry of a live thread.
 */
const parts = [`${BOOT}-`, ''];

export function nextId(): string {
  counter++;
  parts[1] = counter.toString(36);
  return parts.join('');
}
