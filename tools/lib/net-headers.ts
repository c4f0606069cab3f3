/**
 * Request headers a caller may set, and response headers as one plain object.
 *
 * Some headers are the transport's business, not the caller's: Host would let a request checked
 * for one site reach another virtual host on the same address; Content-Length and
 * Transfer-Encoding could desynchronise the framing (request smuggling); Connection, Upgrade and
 * the other hop-by-hop headers describe the connection we own.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { NetworkError } from '../../src/errors.ts';

/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const RESERVED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  'proxy-authorization',
  'http2-settings',
]);

export const MAX_REQUEST_HEADERS = 50;
export const MAX_HEADER_VALUE = 8192;

/** Checks caller-supplied headers and returns them with lower-case names. */
export function checkRequestHeaders(
  headers: Record<string, unknown> | undefined,
  argName = 'headers',
): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined || headers === null) return out;
  if (typeof headers !== 'object' || Array.isArray(headers)) {
    throw new NetworkError(
      'net.bad_header',
      `argument '${argName}' must be an object of header names to string values`,
    );
  }
  const entries = Object.entries(headers);
  if (entries.length > MAX_REQUEST_HEADERS) {
    throw new NetworkError(
      'net.bad_header',
      `at most ${MAX_REQUEST_HEADERS} headers may be set (got ${entries.length})`,
    );
  }
  for (const [name, value] of entries) {
    if (!TOKEN.test(name)) {
      throw new NetworkError(
        'net.bad_header',
        `header name ${JSON.stringify(name)} is not a valid HTTP header name`,
      );
    }
    const lower = name.toLowerCase();
    if (RESERVED.has(lower) || lower.startsWith('proxy-')) {
      throw new NetworkError('net.bad_header', `header ${name} is set by the transport and cannot be given`);
    }
    if (typeof value !== 'string') {
      throw new NetworkError('net.bad_header', `header ${name} must have a string value`);
    }
    if (/[\r\n\0]/.test(value)) {
      throw new NetworkError(
        'net.bad_header',
        `header ${name} contains a line break or NUL character, which is not allowed`,
      );
    }
    if (value.length > MAX_HEADER_VALUE) {
      throw new NetworkError(
        'net.bad_header',
        `header ${name} is longer than ${MAX_HEADER_VALUE} characters`,
      );
    }
    out[lower] = value;
  }
  return out;
}

/** Response headers with lower-case names; repeated headers joined with ", " (Set-Cookie with "\n"). */
export function flattenHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    out[lower] = Array.isArray(value) ? value.join(lower === 'set-cookie' ? '\n' : ', ') : String(value);
  }
  return out;
}

/** Headers that carry credentials for one origin; dropped when a redirect leaves that origin. */
export const ORIGIN_CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
