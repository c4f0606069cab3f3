/**
 * One outbound HTTP exchange for fetch_url and webhook, under the web guard:
 * - every hop (the first and each redirect) goes through `resolveAndCheck`, and a `deny` stops it;
 * - the connection of a hop goes to an address that check approved (net-pin), not to a fresh DNS
 *   answer;
 * - redirects are followed by hand, at most `maxRedirects`, and credentials are not carried to
 *   another origin;
 * - one deadline covers the whole exchange, redirects and body included, and the caller's signal
 *   cancels it;
 * - the body is read up to `maxBytes` and the rest is never downloaded.
 */
import { isIP } from 'node:net';
import type { ToolConfig } from '../../src/config/types.ts';
import { NetworkError } from '../../src/errors.ts';
import type { Verdict } from '../../src/guard/types.ts';
import { resolveAndCheck } from '../../src/guard/web.ts';
import { abortable } from './abortable.ts';
import { discard, readCapped } from './net-body.ts';
import { toNetworkError } from './net-errors.ts';
import { ORIGIN_CREDENTIAL_HEADERS } from './net-headers.ts';
import { type DnsLookup, pinnedAgent, undici } from './net-pin.ts';

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface GuardedRequest {
  url: string;
  method: HttpMethod;
  /** Lower-case names, already checked (net-headers). */
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface GuardedRequestOptions {
  /** The calling listener's tool_config; the guard reads allowed_domains, blocked_domains, allow_loopback. */
  toolConfig: ToolConfig;
  /** The call's signal (runtime timeout, shutdown). */
  signal: AbortSignal;
  /** Deadline for the whole exchange, redirects and body included. */
  timeoutMs: number;
  /** Body bytes kept; beyond this the response is cut and `truncated` is set. */
  maxBytes: number;
  maxRedirects: number;
  /**
   * 'all': 301/302/303 are followed as GET without a body (what browsers and curl -L do), 307/308
   * repeat the request. 'same-method': only 307/308 are followed; others are returned as they are
   * (a webhook must not silently turn its POST into a GET).
   */
  redirects: 'all' | 'same-method';
  lookup: DnsLookup;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
  truncated: boolean;
  /** The URL the final response came from. */
  url: string;
  /** Each URL redirected to, in order. */
  redirects: string[];
  /** Reasons of `warn` verdicts met on redirect hops (the first hop's verdict is the runtime's). */
  warnings: string[];
}

/** How a webhook delivery goes out: guardedRequest, or what took its place in the resource cache. */
export type Delivery = (req: GuardedRequest, opts: GuardedRequestOptions) => Promise<GuardedResponse>;

/**
 * Key of webhook's delivery in the tool resource cache. Production puts guardedRequest there on
 * first use; organism/testing puts a recorder there first, so a test runs the real tool (arguments,
 * body, Idempotency-Key, response cut) and nothing leaves the process.
 */
export const WEBHOOK_DELIVERY_RESOURCE = 'net:webhook-delivery';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];

/** Parses and checks a URL the caller gave: http(s) only, no user:password. */
export function parseHttpUrl(raw: string, what = 'url'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new NetworkError(
      'net.bad_url',
      `${what} ${JSON.stringify(raw.slice(0, 200))} is not an absolute URL`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NetworkError(
      'net.bad_url',
      `${what} must use http or https, not ${url.protocol.replace(/:$/, '')}`,
    );
  }
  if (url.username || url.password) {
    throw new NetworkError(
      'net.bad_url',
      `${what} must not contain a user name or password; send credentials in an Authorization header instead`,
    );
  }
  return url;
}

function refused(verdict: Verdict, url: URL, hop: number): NetworkError {
  const where = hop === 0 ? `the request to ${url.origin}` : `the redirect to ${url.origin}`;
  // rule_id and suggestion are in the message too: the runtime passes an error's message to the agent, not its details.
  const rule = verdict.rule_id ? ` (${verdict.rule_id})` : '';
  const suggestion = verdict.suggestion ? ` ${verdict.suggestion}` : '';
  return new NetworkError(
    'net.refused',
    `${where} was refused by the web guard${rule}: ${verdict.reason ?? 'not allowed'}${suggestion}`,
    {
      rule_id: verdict.rule_id,
      suggestion: verdict.suggestion,
      reason: verdict.reason,
      url: url.origin,
      hop,
    },
  );
}

/** The method, body and headers of the next hop, per the Fetch standard's redirect rules. */
function nextRequest(status: number, current: GuardedRequest, from: URL, to: URL): GuardedRequest {
  let { method, body } = current;
  const headers = { ...current.headers };
  if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    method = 'GET';
    body = undefined;
    for (const name of BODY_HEADERS) delete headers[name];
  }
  if (from.origin !== to.origin) for (const name of ORIGIN_CREDENTIAL_HEADERS) delete headers[name];
  return { url: to.href, method, headers, ...(body === undefined ? {} : { body }) };
}

export async function guardedRequest(
  req: GuardedRequest,
  opts: GuardedRequestOptions,
): Promise<GuardedResponse> {
  let url = parseHttpUrl(req.url);
  let current = req;
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, deadline]);
  const redirects: string[] = [];
  const warnings: string[] = [];
  for (let hop = 0; ; hop++) {
    const failure = { origin: url.origin, timeoutMs: opts.timeoutMs, callSignal: opts.signal, deadline };
    let check: Awaited<ReturnType<typeof resolveAndCheck>>;
    try {
      // DNS takes no signal: stop waiting for it on abort, so a slow resolver still stops on time.
      check = await abortable(resolveAndCheck(url.href, opts.toolConfig, { lookup: opts.lookup }), signal);
    } catch (error) {
      throw toNetworkError(error, failure);
    }
    if (check.verdict.verdict === 'deny') throw refused(check.verdict, url, hop);
    if (check.verdict.verdict === 'warn' && hop > 0 && check.verdict.reason)
      warnings.push(check.verdict.reason);
    const target = check.url;
    const bare = target.hostname.replace(/^\[|\]$/g, '');
    if (check.addresses.length === 0 && isIP(bare) === 0) {
      throw new NetworkError('net.dns', `the host name of ${target.origin} could not be resolved`, {
        origin: target.origin,
      });
    }
    const agent = pinnedAgent(target.hostname, check.addresses, { timeoutMs: opts.timeoutMs });
    try {
      const res = await undici().request(target, {
        method: current.method,
        headers: current.headers,
        body: current.body ?? null,
        signal,
        dispatcher: agent,
      });
      const location = res.headers.location;
      // max_redirects 0 means "do not follow": the 3xx itself is the result.
      const follow =
        opts.maxRedirects > 0 &&
        REDIRECT_STATUSES.has(res.statusCode) &&
        typeof location === 'string' &&
        (opts.redirects === 'all' || res.statusCode === 307 || res.statusCode === 308);
      if (follow) {
        discard(res.body);
        let next: URL;
        try {
          next = new URL(location, target);
        } catch {
          throw new NetworkError('net.bad_url', `${target.origin} redirected to an invalid URL`, {
            origin: target.origin,
          });
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw new NetworkError(
            'net.refused',
            `the redirect from ${target.origin} to a ${next.protocol.replace(/:$/, '')}: URL was refused; only http and https are followed`,
            { rule_id: 'net.redirect_scheme', suggestion: null, url: target.origin, hop: hop + 1 },
          );
        }
        if (redirects.length >= opts.maxRedirects) {
          throw new NetworkError(
            'net.too_many_redirects',
            `stopped after ${opts.maxRedirects} redirect${opts.maxRedirects === 1 ? '' : 's'} (tool_config max_redirects); the last one pointed to ${next.origin}`,
            { redirects: redirects.length, max_redirects: opts.maxRedirects },
          );
        }
        current = nextRequest(res.statusCode, current, target, next);
        redirects.push(next.href);
        url = next;
        continue;
      }
      const read =
        current.method === 'HEAD'
          ? { bytes: Buffer.alloc(0), truncated: false }
          : await readCapped(res.body, opts.maxBytes);
      if (current.method === 'HEAD') discard(res.body);
      return {
        status: res.statusCode,
        headers: res.headers,
        bytes: read.bytes,
        truncated: read.truncated,
        url: target.href,
        redirects,
        warnings,
      };
    } catch (error) {
      throw toNetworkError(error, { ...failure, origin: target.origin });
    } finally {
      agent.destroy().catch(() => {});
    }
  }
}
