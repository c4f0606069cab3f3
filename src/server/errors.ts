/**
 * One mapping from OrganismError codes to HTTP statuses, so every endpoint answers the same failure
 * the same way: 4xx for the caller's mistakes (never 5xx for bad input), 429 when over the rate
 * limit, 503 when busy, both with Retry-After.
 */
import {
  AmbiguousIdError,
  AuthError,
  BusyError,
  CallError,
  ConfigError,
  OrganismError,
  PayloadValidationError,
  ReloadError,
  RoutingError,
  ServerError,
  ShuttingDownError,
  XmlError,
} from '../errors.ts';

export interface HttpError {
  status: number;
  body: { error: { code: string; message: string; [extra: string]: unknown } };
  headers?: Record<string, string>;
}

export function toHttpError(error: unknown): HttpError {
  if (error instanceof OrganismError) {
    const body: HttpError['body'] = { error: error.toJSON() };
    // A refused reload lists every problem of the file, each with its line and column.
    if (error instanceof ConfigError) body.error.issues = error.issues;
    // An ambiguous id prefix names the ids it starts; a failed call, its thread.
    if (error instanceof AmbiguousIdError) body.error.candidates = error.details?.candidates;
    if (error instanceof CallError) body.error.thread = error.details?.thread;
    // Every field a payload got wrong, each with its path (the message lists them too).
    if (error instanceof PayloadValidationError && Array.isArray(error.details?.fields))
      body.error.fields = error.details.fields;
    return { status: statusFor(error), body, headers: headersFor(error) };
  }
  return { status: 500, body: { error: { code: 'server.internal', message: 'internal error' } } };
}

function statusFor(error: OrganismError): number {
  if (error instanceof XmlError)
    return error.code === 'xml.too_large' || error.code === 'xml.too_many_elements' ? 413 : 400;
  if (error instanceof PayloadValidationError) return 422;
  if (error instanceof RoutingError) return 404;
  if (error instanceof BusyError || error instanceof ShuttingDownError) return 503;
  if (error instanceof AuthError) return error.code === 'auth.forbidden' ? 403 : 401;
  if (error instanceof ServerError) {
    if (error.code === 'server.rate_limited') return 429;
    if (error.code === 'server.overloaded') return 503;
    return 500;
  }
  if (error instanceof ConfigError) return 422;
  if (error instanceof ReloadError) return error.code === 'reload.in_progress' ? 409 : 500;
  if (error instanceof CallError) return error.code === 'call.timeout' ? 504 : 502;
  if (error.code === 'thread.not_found' || error.code === 'approval.not_found') return 404;
  if (error.code === 'approval.forbidden') return 403;
  if (error.code === 'approval.decided') return 409;
  if (error.code === 'thread.stopped') return 409;
  return 400;
}

function headersFor(error: OrganismError): Record<string, string> | undefined {
  if (error instanceof BusyError) return { 'retry-after': '1' };
  if (
    error instanceof ServerError &&
    (error.code === 'server.rate_limited' || error.code === 'server.overloaded')
  ) {
    const seconds = Number(error.details?.retryAfterSeconds ?? 1);
    return { 'retry-after': String(Math.max(1, Math.ceil(seconds))) };
  }
  if (error instanceof AuthError && error.code !== 'auth.forbidden')
    return { 'www-authenticate': 'Bearer realm="organism"' };
  return undefined;
}

export function httpError(status: number, code: string, message: string): HttpError {
  return { status, body: { error: { code, message } } };
}
