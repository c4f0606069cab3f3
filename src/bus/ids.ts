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

/** The counter of the id nextId made last (the id is BOOT and its base-36 digits), for writeMessageId. */
export function lastIdCount(): number {
  return high * 36 + low;
}

const BOOT_CODES = Buffer.from(BOOT, 'latin1');
const DIGIT_CODES = Buffer.from(DIGITS, 'latin1');

/**
 * Writes the id nextId made for `idCount` (see lastIdCount) into `buf` at `at`, one byte a
 * character, as its UTF-8 is, when it is `length` characters long; false, with nothing written
 * outside those `length` bytes, when it is not. The id is a two-part string (head and digit):
 * reading its characters makes V8 flatten it into a copy, a runtime call and a string the
 * collector then moves with the message's history; this writes the same bytes from the number.
 */
export function writeMessageId(idCount: number, buf: Uint8Array, at: number, length: number): boolean {
  const boot = BOOT_CODES;
  const digitsAt = at + boot.length;
  if (length <= boot.length) return false;
  for (let i = 0; i < boot.length; i++) buf[at + i] = boot[i]!;
  // The digits from the last, back to the prefix: in 32 bits (a counter below 2^31, every one in
  // practice) a division by 36 is a multiplication.
  let p = at + length;
  let v = idCount;
  while (p > digitsAt) {
    if (v > 0x7fffffff) {
      buf[--p] = DIGIT_CODES[v % 36]!;
      v = Math.floor(v / 36);
    } else {
      const q = (v / 36) | 0;
      buf[--p] = DIGIT_CODES[v - q * 36]!;
      v = q;
    }
    if (v === 0) break;
  }
  return v === 0 && p === digitsAt;
}
