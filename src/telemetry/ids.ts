/**
 * A hop span's ids with their bytes, as the span's protobuf (wire.ts) writes them: a span id is 8
 * random bytes drawn from a pool the system's CSPRNG fills 4,096 ids at a time, its hex sliced from
 * the pool's, made in one call per fill (per id, the SDK's generator drew two Math.random numbers
 * and made a Buffer's hex, and the hex was parsed back into bytes for the wire). A trace's 16 bytes
 * are made once per trace (TraceIds), and every hop of it hands them to its children.
 */
import { randomFillSync } from 'node:crypto';
import type { TraceParent } from './traceparent.ts';

/** Span ids per fill of the pool. */
const POOL_IDS = 4096;
const SPAN_BYTES = 8;

/** One trace as this process writes it: its id, that id's bytes, and its thread's attribute encoded. */
export class TraceIds {
  readonly bytes: Buffer;
  /** `00-<trace id>-`: a traceparent's start, so that a span's is this and two more parts. */
  readonly head: string;
  /** The `organism.thread` attribute last encoded for a span of this trace (see hop.ts), and its value. */
  thread = '';
  threadAttribute: Buffer | undefined;

  constructor(readonly id: string) {
    this.bytes = Buffer.from(id, 'hex');
    this.head = `00-${id}-`;
  }
}

/**
 * A span's own ids: what its traceparent names, and what parseTraceparent gives back for that
 * traceparent (ownTraceparent keeps it), so the child hop finds its parent's bytes here. Never
 * changed once made.
 */
export class SpanIds implements TraceParent {
  readonly traceId: string;

  constructor(
    readonly trace: TraceIds,
    /** The span id's bytes: `bytes[at]` to `bytes[at + 7]`. */
    readonly bytes: Uint8Array,
    readonly at: number,
    readonly spanId: string,
    /** Bit 0: sampled; no other bit. */
    readonly flags: number,
  ) {
    this.traceId = trace.id;
  }
}

let pool = new Uint8Array(0);
let poolHex = '';
let next = POOL_IDS;

/** A new span of `trace` with a random span id. */
export function newSpanIds(trace: TraceIds, flags: number): SpanIds {
  if (next === POOL_IDS) refill();
  const at = next++ * SPAN_BYTES;
  return new SpanIds(trace, pool, at, poolHex.slice(2 * at, 2 * at + 2 * SPAN_BYTES), flags & 1);
}

/**
 * A fresh pool (never the one refilled: the spans still open hold the old one's bytes). An id of
 * all zeros is invalid (W3C); as the SDK's generator does, its last byte is set to 1.
 */
function refill(): void {
  const bytes = randomFillSync(Buffer.allocUnsafeSlow(POOL_IDS * SPAN_BYTES));
  for (let at = 0; at < bytes.length; at += SPAN_BYTES) {
    let any = 0;
    for (let i = 0; i < SPAN_BYTES; i++) any |= bytes[at + i]!;
    if (any === 0) bytes[at + SPAN_BYTES - 1] = 1;
  }
  pool = bytes;
  poolHex = bytes.toString('hex');
  next = 0;
}

/**
 * The TraceIds of `traceId`, the one last asked for (one slot) when it is the same: the hops whose
 * parent came from another process (or that start a thread) mostly follow others of their trace.
 */
export function traceIds(traceId: string): TraceIds {
  if (traceId !== lastTrace.id) lastTrace = new TraceIds(traceId);
  return lastTrace;
}

let lastTrace = new TraceIds('');
