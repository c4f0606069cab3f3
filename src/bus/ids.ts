/**
 * Ids for messages and frames: unique across processes and restarts (a random boot prefix) yet
 * far cheaper than a UUID per hop. Thread ids, which callers see, stay random UUIDs.
 */
import { randomUUID } from 'node:crypto';

const BOOT = randomUUID().slice(0, 13);
let counter = 0;

export function nextId(): string {
  counter++;
  return `${BOOT}-${counter.toString(36)}`;
}
