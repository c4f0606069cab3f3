/**
 * What every response and request goes through: security headers, a cap on declared body sizes,
 * and a refusal of browser requests from other sites (an open loopback API must not be drivable
 * by whatever web page the operator has open: cross-site POSTs, DNS rebinding).
 */
import type { MiddlewareHandler } from 'hono';
import { isLoopbackHost } from './auth.ts';
import { DRAIN_FACTOR, drainBody } from './body.ts';
import { httpError } from './errors.ts';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
      // The dashboard's page sets a policy that lets it load its own scripts; every other answer
      // gets the one that allows nothing.
      if (name === 'content-security-policy' && c.res.headers.has(name)) continue;
      c.res.headers.set(name, value);
    }
  };
}

/**
 * Refuses a request whose declared body is over `maxBytes` before anything reads it (413). Bodies
 * without a length (chunked) are capped while being read (see body.ts).
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const declared = Number(c.req.header('content-length') ?? '0');
    if (declared > maxBytes) {
      // Read and dropped within bounds first (body.ts), so the client gets to read the answer.
      if (declared <= maxBytes * DRAIN_FACTOR) await drainBody(c.req.raw.body, maxBytes);
      const e = httpError(413, 'request.too_large', `request body over ${maxBytes} bytes`);
      // The connection is closed after the answer: it cannot carry another request.
      return c.json(e.body, 413, { connection: 'close' });
    }
    await next();
  };
}

/**
 * Browsers say where a request comes from (`Origin`, `Sec-Fetch-Site`); command-line clients say
 * nothing. A request from another site is refused (403), and when the API listens on loopback the
 * `Host` must be a loopback name too, which defeats DNS rebinding.
 */
export function sameOriginOnly(listenHost: string): MiddlewareHandler {
  const loopback = isLoopbackHost(listenHost);
  return async (c, next) => {
    const refusal = crossSiteRefusal(
      {
        origin: c.req.header('origin'),
        host: c.req.header('host'),
        fetchSite: c.req.header('sec-fetch-site'),
      },
      loopback,
    );
    if (refusal) {
      const e = httpError(403, 'request.cross_origin', refusal);
      return c.json(e.body, 403);
    }
    await next();
  };
}

/** The reason to refuse, or undefined. Shared with the WebSocket upgrade. */
export function crossSiteRefusal(
  headers: { origin?: string | undefined; host?: string | undefined; fetchSite?: string | undefined },
  loopback: boolean,
): string | undefined {
  const host = headers.host ?? '';
  if (loopback && host !== '' && !isLoopbackHost(hostName(host))) {
    return `the API listens on loopback and does not answer for host '${hostName(host)}'`;
  }
  if (headers.fetchSite === 'cross-site') return 'requests from other sites are refused';
  if (headers.origin && headers.origin !== 'null') {
    let originHost: string;
    try {
      originHost = new URL(headers.origin).host;
    } catch {
      return 'the Origin header is not a URL';
    }
    if (originHost !== host) return 'requests from other origins are refused';
  } else if (headers.origin === 'null') {
    return 'requests from opaque origins are refused';
  }
  return undefined;
}

/** `127.0.0.1:7777` -> `127.0.0.1`, `[::1]:80` -> `::1`. */
function hostName(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(1, hostHeader.indexOf(']'));
  const colon = hostHeader.lastIndexOf(':');
  return colon > 0 ? hostHeader.slice(0, colon) : hostHeader;
}
