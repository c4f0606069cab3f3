/**
 * Response bodies: read at most N bytes from a stream and stop (the rest is never downloaded),
 * then present them as text when they are text and as base64 when they are not.
 */

type Body = AsyncIterable<Uint8Array> & {
  destroy?(): unknown;
  on?(event: 'error', listener: () => void): unknown;
};

/**
 * Stops a response body we do not want (a redirect's, the rest past the size limit). undici's
 * body emits an AbortError when destroyed; with no listener that would be an uncaught exception.
 */
export function discard(body: Body): void {
  body.on?.('error', () => {});
  body.destroy?.();
}

export interface CappedBytes {
  bytes: Buffer;
  /** The stream had more than the limit; what was read is the first `limit` bytes. */
  truncated: boolean;
}

/**
 * Reads the stream up to `limit` bytes. When more arrives the stream is destroyed, so a huge or
 * endless response costs at most `limit` bytes of memory and one chunk of network.
 */
export async function readCapped(body: Body, limit: number): Promise<CappedBytes> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const room = limit - size;
    if (chunk.length > room) {
      if (room > 0) chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, room));
      size += Math.max(room, 0);
      truncated = true;
      body.on?.('error', () => {}); // leaving the loop destroys the stream, which then emits AbortError
      break;
    }
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    size += chunk.length;
  }
  if (truncated) discard(body);
  return { bytes: Buffer.concat(chunks, size), truncated };
}

export interface DecodedBody {
  body: string;
  body_encoding: 'utf8' | 'base64';
}

const TEXT_TYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-www-form-urlencoded',
  'application/x-ndjson',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/graphql',
  'application/sql',
  'image/svg+xml',
]);

const BINARY_PREFIXES = ['image/', 'audio/', 'video/', 'font/', 'model/'];
const BINARY_TYPES = new Set([
  'application/octet-stream',
  'application/pdf',
  'application/zip',
  'application/gzip',
  'application/x-gzip',
  'application/x-tar',
  'application/x-7z-compressed',
  'application/wasm',
  'application/msword',
  'application/vnd.ms-excel',
]);

/** `text/html; charset=ISO-8859-1` -> { mime: 'text/html', charset: 'iso-8859-1' }. */
export function parseContentType(value: string | undefined): { mime: string; charset: string | undefined } {
  if (!value) return { mime: '', charset: undefined };
  const [type, ...params] = value.split(';');
  let charset: string | undefined;
  for (const p of params) {
    const m = /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(p);
    if (m) charset = m[1]!.toLowerCase();
  }
  return { mime: type!.trim().toLowerCase(), charset };
}

function isTextMime(mime: string): boolean {
  return mime.startsWith('text/') || TEXT_TYPES.has(mime) || mime.endsWith('+json') || mime.endsWith('+xml');
}

function isBinaryMime(mime: string): boolean {
  if (mime === 'image/svg+xml') return false;
  return BINARY_TYPES.has(mime) || BINARY_PREFIXES.some((p) => mime.startsWith(p));
}

function decoderFor(charset: string | undefined, fatal: boolean): TextDecoder {
  try {
    return new TextDecoder(charset ?? 'utf-8', { fatal });
  } catch {
    return new TextDecoder('utf-8', { fatal }); // unknown charset label: UTF-8 is the web's default
  }
}

/**
 * Text when the Content-Type says text (decoded with its charset), base64 when it says binary;
 * with no or an unknown type, text if the bytes are valid UTF-8 without NUL bytes. A body cut at
 * the size limit may end inside a multi-byte character: `stream: true` drops that partial tail
 * instead of failing or inventing a replacement character.
 */
export function decodeBody(bytes: Buffer, contentType: string | undefined, truncated: boolean): DecodedBody {
  const { mime, charset } = parseContentType(contentType);
  if (isTextMime(mime)) {
    return { body: decoderFor(charset, false).decode(bytes, { stream: truncated }), body_encoding: 'utf8' };
  }
  if (!isBinaryMime(mime) && !bytes.includes(0)) {
    try {
      return { body: decoderFor(charset, true).decode(bytes, { stream: truncated }), body_encoding: 'utf8' };
    } catch {
      // not UTF-8: fall through to base64
    }
  }
  return { body: bytes.toString('base64'), body_encoding: 'base64' };
}
