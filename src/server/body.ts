/** Reading a JSON request body with a hard byte cap, whether or not the client declared a length. */
import type { Context } from 'hono';
import { decodeUtf8Strict } from '../xml/parse.ts';
import { type HttpError, httpError, toHttpError } from './errors.ts';
import { LARGE_BODY_BYTES, largeBodyTurn } from './turns.ts';

/**
 * A body over the cap is still read, and dropped, up to this many times the cap and for at most
 * DRAIN_MS, before the 413 is sent: a client that is still writing it (HTTP clients send the whole
 * body before they read) then reads the answer instead of finding the connection cut (EPIPE,
 * ECONNRESET). Past either bound the connection is closed at once, as before.
 */
export const DRAIN_FACTOR = 4;
export const DRAIN_MS = 2_000;

/** Reads and drops the rest of `stream` within the drain bounds; true when it ended within them. */
export async function drainBody(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<boolean> {
  if (!stream) return true;
  const reader = stream.getReader();
  const budget = maxBytes * DRAIN_FACTOR;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), DRAIN_MS);
  });
  let read = 0;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]);
      if (next === 'late') return false;
      if (next.done) return true;
      read += next.value.byteLength;
      if (read > budget) return false;
    }
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
}

export async function readJsonBody(c: Context, maxBytes: number): Promise<{ value: unknown } | HttpError> {
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > maxBytes) {
    if (declared <= maxBytes * DRAIN_FACTOR) await drainBody(c.req.raw.body, maxBytes);
    return tooLarge(maxBytes);
  }
  const type = c.req.header('content-type') ?? '';
  if (!type.includes('application/json')) {
    return httpError(415, 'request.content_type', 'send the request as application/json');
  }
  const bytes = await readCapped(c.req.raw.body, maxBytes);
  if (bytes === undefined) return tooLarge(maxBytes); // readCapped drained what it could
  // A large body's decode and JSON parse each run in a turn of their own (turns.ts), as does what
  // the route does with it next (the XML parse of an injected payload).
  const large = bytes.length > LARGE_BODY_BYTES;
  try {
    if (large) await largeBodyTurn();
    const text = decodeUtf8Strict(bytes);
    if (large) await largeBodyTurn();
    return { value: JSON.parse(text) };
  } catch (error) {
    return toHttpError(error).status === 500
      ? httpError(400, 'request.invalid_json', `request body is not valid JSON: ${(error as Error).message}`)
      : toHttpError(error);
  }
}

/** 413; the rest of the body is not read, so the connection is closed after the answer. */
function tooLarge(maxBytes: number): HttpError {
  return {
    ...httpError(413, 'request.too_large', `request body over ${maxBytes} bytes`),
    headers: { connection: 'close' },
  };
}

/** The body's bytes, or undefined as soon as it passes `maxBytes` (the rest is not read). */
async function readCapped(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      reader.releaseLock();
      await drainBody(stream, maxBytes);
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
