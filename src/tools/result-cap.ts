/**
 * Caps a tool's result at max_result_bytes of JSON. A result over the cap becomes the cut JSON text
 * (cut on a UTF-8 character boundary, never mid-character) followed by a marker with the original
 * size, so the caller knows it saw only part and how much more there was. Content blocks count by
 * their encoded (base64 JSON) size.
 */

import { contentText, describeContent, isToolContent } from './content.ts';

export interface CappedResult {
  value: unknown;
  truncated?: { original_bytes: number };
}

export function truncationMarker(originalBytes: number, limit: number): string {
  return `\n[truncated: result was ${originalBytes} bytes of JSON, limit ${limit}]`;
}

/** Largest prefix of `bytes` no longer than `max` that ends on a character boundary. */
export function utf8Prefix(bytes: Buffer, max: number): Buffer {
  if (bytes.length <= max) return bytes;
  // Continuation bytes are 10xxxxxx. If the byte just past the cut is one, the cut splits a
  // character: step back to that character's lead byte and cut before it.
  let end = Math.max(0, max);
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

/** Throws TypeError for values JSON cannot carry (cycles, BigInt). */
export function capResult(value: unknown, maxBytes: number): CappedResult {
  const json = JSON.stringify(value === undefined ? null : value) ?? 'null';
  // Fast path: even at 3 bytes per UTF-16 unit a short string is under the cap.
  if (json.length * 3 <= maxBytes) return { value };
  const bytes = Buffer.from(json, 'utf8');
  if (bytes.length <= maxBytes) return { value };
  const marker = truncationMarker(bytes.length, maxBytes);
  const room = maxBytes - Buffer.byteLength(marker, 'utf8');
  // Cut base64 is no image: content over the cap is cut as its text form (binary described).
  const shown = isToolContent(value) ? Buffer.from(contentText(describeContent(value)), 'utf8') : bytes;
  const head = room > 0 ? utf8Prefix(shown, room).toString('utf8') : '';
  return { value: head + marker, truncated: { original_bytes: bytes.length } };
}
