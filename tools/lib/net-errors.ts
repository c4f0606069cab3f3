/**
 * Turns what undici, node:net and node:tls throw into NetworkError with one message per kind of
 * failure, so fetch_url, webhook and web_search report "connection refused" the same way.
 */
import { NetworkError, OrganismError } from '../../src/errors.ts';

/** Every error code found on the error, its cause and (for happy-eyeballs) its aggregated errors. */
function codesOf(error: unknown, depth = 0): string[] {
  if (error === null || typeof error !== 'object' || depth > 4) return [];
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown };
  const codes: string[] = typeof e.code === 'string' ? [e.code] : [];
  codes.push(...codesOf(e.cause, depth + 1));
  if (Array.isArray(e.errors)) for (const inner of e.errors) codes.push(...codesOf(inner, depth + 1));
  return codes;
}

export interface FailureContext {
  /** `https://example.com:8443`: where we were talking to; never the path or query (they may hold tokens). */
  origin: string;
  timeoutMs: number;
  /** The caller's signal (shutdown, the runtime's own timeout). */
  callSignal: AbortSignal;
  /** Our deadline signal. */
  deadline: AbortSignal;
}

function reasonText(signal: AbortSignal): string {
  const reason = signal.reason as unknown;
  if (reason instanceof Error && reason.message) return `: ${reason.message}`;
  return '';
}

export function toNetworkError(error: unknown, ctx: FailureContext): OrganismError {
  if (error instanceof OrganismError) return error;
  if (ctx.callSignal.aborted) {
    return new NetworkError(
      'net.aborted',
      `the request to ${ctx.origin} was cancelled${reasonText(ctx.callSignal)}`,
      {
        origin: ctx.origin,
      },
    );
  }
  const codes = codesOf(error);
  const has = (...wanted: string[]) => codes.some((c) => wanted.includes(c));
  const detail = { origin: ctx.origin, cause: codes[0] ?? null };
  if (
    ctx.deadline.aborted ||
    has(
      'UND_ERR_HEADERS_TIMEOUT',
      'UND_ERR_BODY_TIMEOUT',
      'UND_ERR_CONNECT_TIMEOUT',
      'ETIMEDOUT',
      'ABORT_ERR',
    )
  ) {
    return new NetworkError(
      'net.timeout',
      `no complete response from ${ctx.origin} within ${ctx.timeoutMs} ms; the request was aborted`,
      { ...detail, timeout_ms: ctx.timeoutMs },
    );
  }
  if (has('ECONNREFUSED')) {
    return new NetworkError(
      'net.connection_refused',
      `connection refused by ${ctx.origin} (nothing is listening there)`,
      detail,
    );
  }
  if (has('ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME', 'EAI_FAIL')) {
    return new NetworkError('net.dns', `the host name of ${ctx.origin} could not be resolved`, detail);
  }
  if (has('EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL')) {
    return new NetworkError('net.unreachable', `${ctx.origin} is unreachable from here`, detail);
  }
  if (has('ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED')) {
    return new NetworkError(
      'net.connection_reset',
      `${ctx.origin} closed the connection before sending a complete response`,
      detail,
    );
  }
  if (
    codes.some(
      (c) =>
        c.startsWith('ERR_TLS') ||
        c.startsWith('ERR_SSL') ||
        c.startsWith('CERT_') ||
        c.includes('SELF_SIGNED') ||
        c.startsWith('UNABLE_TO_') ||
        c === 'ERR_CERT_ALTNAME_INVALID' ||
        c === 'HOSTNAME_MISMATCH',
    )
  ) {
    return new NetworkError(
      'net.tls',
      `the TLS connection to ${ctx.origin} failed (certificate or handshake: ${codes[0]})`,
      detail,
    );
  }
  if (
    codes.some(
      (c) => c.startsWith('HPE_') || c === 'UND_ERR_INFO' || c === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
    )
  ) {
    return new NetworkError('net.protocol', `${ctx.origin} sent a malformed HTTP response`, detail);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new NetworkError('net.failed', `the request to ${ctx.origin} failed: ${message}`, detail, {
    cause: error,
  });
}
