/** What the route modules share: the Hono env type, error answers, role checks, query parsing. */
import type { ServerResponse } from 'node:http';
import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import { type Principal, type Role, requireRole } from '../auth.ts';
import { type HttpError, httpError, toHttpError } from '../errors.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { OrganismService } from '../service.ts';

/**
 * `outgoing`: the Node response under the request, when @hono/node-server serves it (absent when a
 * test calls app.request()): its 'close' says the answer has ended, stream or not.
 */
export type ApiEnv = {
  Variables: { principal: Principal };
  Bindings: { outgoing?: ServerResponse } | undefined;
};
export type ApiApp = Hono<ApiEnv>;
export type ApiContext = Context<ApiEnv>;

export interface RouteDeps {
  service: OrganismService;
  logger: Logger;
  maxBodyBytes: number;
  /** Current inject limiter (a reload may replace it). */
  injectLimiter: () => RateLimiter;
}

export function fail(c: Context, e: HttpError): Response {
  return c.json(e.body, e.status as 400, e.headers);
}

export function failWith(c: Context, error: unknown): Response {
  return fail(c, toHttpError(error));
}

/** The caller, after checking it holds `role` (throws AuthError -> 403, mapped by onError). */
export function allow(c: ApiContext, role: Role, action: string): Principal {
  const principal = c.get('principal');
  requireRole(principal, role, action);
  return principal;
}

export class QueryError extends Error {}

/** `limit`: 1..1000, default 100. */
export function limitParam(c: Context, fallback = 100): number {
  const raw = c.req.query('limit');
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 1000)
    throw new QueryError(`limit must be a whole number 1..1000, not '${raw}'`);
  return n;
}

/** `since`: an ISO time or epoch milliseconds. */
export function timeParam(c: Context, name: string): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(n))
    throw new QueryError(`${name} must be an ISO time or epoch milliseconds, not '${raw}'`);
  return n;
}

export function enumParam<T extends string>(c: Context, name: string, values: readonly T[]): T | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  if (!values.includes(raw as T))
    throw new QueryError(`${name} must be one of ${values.join(', ')}, not '${raw}'`);
  return raw as T;
}

export function stringParam(c: Context, name: string): string | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  if (raw.length > 500) throw new QueryError(`${name} is too long`);
  return raw;
}

export function queryFailure(error: QueryError): HttpError {
  return httpError(400, 'request.query', error.message);
}

/**
 * The answer of a listing route: `read` parses the query string with the *Param readers, `answer`
 * answers it. A bad parameter (QueryError) answers 400 `request.query` instead; any other error,
 * and whatever `answer` throws, goes on to the app's onError.
 */
export function withQuery<Q, R extends Response | Promise<Response>>(
  c: Context,
  read: () => Q,
  answer: (query: Q) => R,
): R | Response {
  let query: Q;
  try {
    query = read();
  } catch (error) {
    if (error instanceof QueryError) return fail(c, queryFailure(error));
    throw error;
  }
  return answer(query);
}
