/**
 * One mapping from OrganismError codes to HTTP statuses, so every endpoint answers the same failure
 * the same way: 4xx for the caller's mistakes (never 5xx for bad input), 503 when busy.
 */
import {
  BusyError,
  OrganismError,
  PayloadValidationError,
  RoutingError,
  ShuttingDownError,
  XmlError,
} from '../errors.ts';

export interface HttpError {
  status: number;
  body: { error: { code: string; message: string } };
  headers?: Record<string, string>;
}

export function toHttpError(error: unknown): HttpError {
  if (error instanceof OrganismError) {
    return { status: statusFor(error), body: { error: error.toJSON() }, headers: headersFor(error) };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error' } } };
}

function statusFor(error: OrganismError): number {
  if (error instanceof XmlError) return error.code === 'xml.too_large' ? 413 : 400;
  if (error instanceof PayloadValidationError) return 422;
  if (error instanceof RoutingError) return 404;
  if (error instanceof BusyError || error instanceof ShuttingDownError) return 503;
  if (error.code === 'thread.not_found') return 404;
  if (error.code === 'thread.stopped') return 409;
  return 400;
}

function headersFor(error: OrganismError): Record<string, string> | undefined {
  return error instanceof BusyError ? { 'retry-after': '1' } : undefined;
}

export function httpError(status: number, code: string, message: string): HttpError {
  return { status, body: { error: { code, message } } };
}
