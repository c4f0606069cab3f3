/**
 * W3C Trace Context `traceparent` values (https://www.w3.org/TR/trace-context/), without
 * OpenTelemetry: the bus and the HTTP ingress read and pass them on whether or not the SDK is loaded.
 *
 *   00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>
 */
import { createHash } from 'node:crypto';

export interface TraceParent {
  traceId: string;
  spanId: string;
  /** Bit 0: sampled. */
  flags: number;
}

const VALID = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';

/**
 * The parts of a traceparent header, or undefined when it is not one. As the spec says, a value
 * that does not parse is ignored (the work starts a trace of its own), never an error for the
 * request: a misconfigured tracer upstream must not make an injection fail. Version ff and all-zero
 * ids are invalid; a later version is read by its first four fields.
 */
export function parseTraceparent(value: string | undefined): TraceParent | undefined {
  if (value === undefined) return undefined;
  // What a hop span wrote for its messages, read back by the hop that delivers one (see ownTraceparent).
  if (value === lastOwn.value) return lastOwn.parts;
  // The runtime's own (every hop reads one): version 00, lower-case, checked without a regex.
  if (value.length === 55 && value.charCodeAt(0) === 48 && value.charCodeAt(1) === 48 && isOwn(value)) {
    const traceId = value.slice(3, 35);
    const spanId = value.slice(36, 52);
    if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
    return { traceId, spanId, flags: hex(value.charCodeAt(53)) * 16 + hex(value.charCodeAt(54)) };
  }
  if (value.length < 55 || value.length > 512) return undefined;
  const m = VALID.exec(value.trim().toLowerCase());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

/** Lower-case hex digit value, or -1. */
function hex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** `00-<32 hex>-<16 hex>-<2 hex>` in lower case, exactly. */
function isOwn(v: string): boolean {
  if (v.charCodeAt(2) !== 45 || v.charCodeAt(35) !== 45 || v.charCodeAt(52) !== 45) return false;
  for (let i = 3; i < 55; i++) {
    if (i === 35 || i === 52) continue;
    if (hex(v.charCodeAt(i)) < 0) return false;
  }
  return true;
}

export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${flags & 1 ? '01' : '00'}`;
}

/**
 * The traceparent a span of this process writes into the messages it publishes: formatTraceparent,
 * with the value and its parts kept (one slot) for parseTraceparent. In memory the message is
 * delivered, and its traceparent read, within the publish that wrote it: the read then finds the
 * parts here instead of checking 55 characters again. `traceId` and `spanId` must be lower-case hex
 * of their lengths (the runtime's own ids); all-zero ids are never kept, since a parse refuses them.
 */
export function ownTraceparent(traceId: string, spanId: string, flags: number): string {
  const value = formatTraceparent(traceId, spanId, flags);
  if (traceId !== ZERO_TRACE && spanId !== ZERO_SPAN)
    rememberOwn(value, { traceId, spanId, flags: flags & 1 });
  return value;
}

/**
 * ownTraceparent for a hop span's ids (ids.ts), known valid: the trace id is a parent's, which
 * parsed, or a thread's, never zero; the span id is drawn never zero. `parts` is what the parse
 * gives back: the span's own record of these ids (with its bytes), never changed after; `value`,
 * their traceparent as the record makes it (SpanIds.traceparent).
 */
export function rememberOwn(value: string, parts: TraceParent): string {
  lastOwn.value = value;
  lastOwn.parts = parts;
  return value;
}

/**
 * True when `value` is the traceparent ownTraceparent made last (the envelope that carries it needs
 * no escaping or check of its characters: they are lower-case hex and dashes). A string compare:
 * the same string is found at once.
 */
export function isOwnTraceparent(value: string): boolean {
  return value === lastOwn.value;
}

/** See ownTraceparent. The parts are shared by every reader: never changed, replaced whole. */
const lastOwn: { value: string | undefined; parts: TraceParent | undefined } = {
  value: undefined,
  parts: undefined,
};

/**
 * The trace id of a thread that arrived with no traceparent: derived from the thread id, so every
 * daemon that starts a span for the thread without a parent puts it into the same trace (a thread
 * continued later, or a broadcast that starts two first hops, stays one trace).
 */
export function threadTraceId(thread: string): string {
  const id = createHash('sha256').update(`organism-thread\u0000${thread}`).digest('hex').slice(0, 32);
  return id === ZERO_TRACE ? '00000000000000000000000000000001' : id;
}
