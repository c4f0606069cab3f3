/** Byte-level helpers shared by the file tools and run_command's output capture. */

/** How much of a file's start is checked for NUL bytes (git uses the same heuristic and size). */
export const BINARY_SNIFF_BYTES = 8000;

/** A NUL byte near the start means binary: text in any encoding we return never contains one. */
export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/**
 * `buf` without a UTF-8 sequence cut off at its end, so text cut at a byte limit never ends in a
 * broken character. Bytes that are not UTF-8 at all are left alone (they decode as U+FFFD anyway).
 */
export function trimPartialUtf8(buf: Buffer): Buffer {
  // A character is at most 4 bytes: find the start of the last one within the final 4.
  for (let back = 1; back <= Math.min(4, buf.length); back++) {
    const byte = buf[buf.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte, keep looking for the lead
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? buf.subarray(0, buf.length - back) : buf;
  }
  return buf;
}

/** The longest prefix of `buf` of at most `max` bytes that does not end inside a UTF-8 character. */
export function utf8Prefix(buf: Buffer, max: number): Buffer {
  return buf.length <= max ? buf : trimPartialUtf8(buf.subarray(0, max));
}
