/**
 * Ids for messages and frames: unique across processes and restarts (a random boot prefix) yet
 * far cheaper than a UUID per hop. Thread ids, which callers see, stay random UUIDs.
 */
import { randomUUID } from 'node:crypto';

const BOOT = `${randomUUID().slice(0, 13)}-`;
const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** The id counter in base 36: its last digit, and the text of the digits before it (with BOOT). */
let low = 0;
let high = 0;
let head = BOOT;

/**
 * `BOOT-<counter in base 36>`, made as the head (the same for 36 ids in a row) plus one digit: a
 * digit is a string V8 keeps ready, so an id is one two-part string (~32 bytes, its parts shared)
 * with no number formatted, where `counter.toString(36)` and a flat copy were ~3x the time (a call
 * into the runtime each, ~5 % of a hop in memory) and ~40 bytes.
 */
export function nextId(): string {
  if (++low === 36) {
    low = 0;
    high++;
    head = BOOT + high.toString(36);
  }
  return head + DIGITS[low];
}
