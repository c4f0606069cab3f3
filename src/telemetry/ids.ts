/**
 * A hop span's ids with their bytes, as the span's protobuf (wire.ts) writes them: a span id is 8
 * random bytes drawn from a pool the system's CSPRNG fills 4,096 ids at a time, its hex sliced from
 * the pool's, made in one call per fill (per id, the SDK's generator drew two Math.random numbers
 * and made a Buffer's hex, and the hex was parsed back into bytes for the wire). A trace's 16 bytes
 * are made once per trace (TraceIds), and every hop of it hands them to its children.
 */
import { randomFillSync } from 'node:crypto';
import type { HopTemplate } from './hop-template.ts';
import type { TraceParent } from './traceparent.ts';

/** Span ids per fill of the pool. */
const POOL_IDS = 4096;
const SPAN_BYTES = 8;

/** One trace as this process writes it: its id, that id's bytes, and its thread's attribute encoded. */
export class TraceIds {
  /**
   * The start of a span's protobuf (wire.ts): Span.trace_id (field 1, 16 bytes) with its tag and
   * length, and the tag of span_id (field 2), which follows.
   */
  readonly field: Buffer;
  /** `00-<trace id>-`: a traceparent's start, so that a span's is this and two more parts. */
  readonly head: string;
  /** The `organism.thread` attribute last encoded for a span of this trace (see hop.ts), and its value. */
  thread = '';
  threadAttribute: Buffer | undefined;
  /** The last hop span written for this trace, for its next one to copy (see hop-template.ts). */
  hopTemplate: HopTemplate | undefined;

  constructor(readonly id: string) {
    this.field = Buffer.concat([Buffer.from([0x0a, 16]), Buffer.from(id, 'hex'), Buffer.from([0x12])]);
    this.head = `00-${id}-`;
  }
}

/**
 * A span's own ids: what its traceparent names, and what parseTraceparent gives back for that
 * traceparent (rememberOwn keeps it), so the child hop finds its parent's bytes here. Never
 * changed once made. Its hex is not a string of its own: `text` holds it at `textAt`, followed by
 * `-01` (the pool's records, see refill), and it is sliced only when asked for; a sampled span's
 * traceparent is the trace's head and one slice of that text.
 */
export class SpanIds implements TraceParent {
  constructor(
    readonly trace: TraceIds,
    /** The span id's bytes: `bytes[at]` to `bytes[at + 7]`. */
    readonly bytes: Uint8Array,
    readonly at: number,
    private readonly text: string,
    private readonly textAt: number,
    /** Bit 0: sampled; no other bit. */
    readonly flags: number,
  ) {}

  /** Ids for a span id given in hex (tests, and spans not drawn from the pool). */
  static of(trace: TraceIds, spanId: string, flags: number): SpanIds {
    return new SpanIds(trace, Buffer.from(spanId, 'hex'), 0, `${spanId}-01`, 0, flags & 1);
  }

  get traceId(): string {
    return this.trace.id;
  }

  get spanId(): string {
    return this.text.slice(this.textAt, this.textAt + 2 * SPAN_BYTES);
  }

  /** `00-<trace id>-<span id>-<flags>`. */
  traceparent(): string {
    return this.flags === 0
      ? `${this.trace.head}${this.spanId}-00`
      : this.trace.head + this.text.slice(this.textAt, this.textAt + RECORD);
  }
}

let pool = new Uint8Array(0);
/** Per id of the pool, its hex and `-01` (RECORD characters) and a space: STRIDE characters. */
let poolText = '';
let next = POOL_IDS;
/** A pool record's length: 16 hex digits and `-01`. */
const RECORD = 2 * SPAN_BYTES + 3;
/** A record and one padding character: two characters at a time, 16-bit writes stay aligned. */
const STRIDE = RECORD + 1;

/** A new span of `trace` with a random span id. */
export function newSpanIds(trace: TraceIds, flags: number): SpanIds {
  if (next === POOL_IDS) refill();
  const i = next++;
  return new SpanIds(trace, pool, i * SPAN_BYTES, poolText, i * STRIDE, flags & 1);
}

/**
 * A fresh pool (never the one refilled: the spans still open hold the old one's bytes). An id of
 * all zeros is invalid (W3C); as the SDK's generator does, its last byte is set to 1. The text is
 * one string for the whole pool (no string per id), written a byte's two hex digits at a time.
 */
function refill(): void {
  const bytes = randomFillSync(Buffer.allocUnsafeSlow(POOL_IDS * SPAN_BYTES));
  const text = new Uint16Array(POOL_IDS * (STRIDE / 2));
  let t = 0;
  for (let at = 0; at < bytes.length; at += SPAN_BYTES) {
    let any = 0;
    for (let i = 0; i < SPAN_BYTES; i++) {
      const b = bytes[at + i]!;
      any |= b;
      text[t++] = HEX_PAIR[b]!;
    }
    if (any === 0) {
      bytes[at + SPAN_BYTES - 1] = 1;
      text[t - 1] = HEX_PAIR[1]!;
    }
    text[t++] = DASH_ZERO;
    text[t++] = ONE_SPACE;
  }
  pool = bytes;
  poolText = Buffer.from(text.buffer, 0, text.byteLength).toString('latin1');
  next = 0;
}

/** A Uint16Array's byte order here: little-endian on every platform Node runs on but s390x. */
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Two latin1 characters as one 16-bit unit of a Uint16Array: `first` at the lower address. */
function pair(first: string, second: string): number {
  const a = first.charCodeAt(0);
  const b = second.charCodeAt(0);
  return LITTLE_ENDIAN ? a | (b << 8) : (a << 8) | b;
}

/** Per byte, its two lower-case hex digits as one 16-bit unit. */
const HEX_PAIR = Uint16Array.from({ length: 256 }, (_, b) => {
  const hex = b.toString(16).padStart(2, '0');
  return pair(hex[0]!, hex[1]!);
});
const DASH_ZERO = pair('-', '0');
const ONE_SPACE = pair('1', ' ');

/**
 * The TraceIds of `traceId`, the one last asked for (one slot) when it is the same: the hops whose
 * parent came from another process (or that start a thread) mostly follow others of their trace.
 */
export function traceIds(traceId: string): TraceIds {
  if (traceId !== lastTrace.id) lastTrace = new TraceIds(traceId);
  return lastTrace;
}

let lastTrace = new TraceIds('');
