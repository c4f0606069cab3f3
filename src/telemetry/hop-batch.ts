/**
 * The export queue of hop spans: each ended hop is written as OTLP protobuf into the batch being
 * filled (wire.ts), a batch is closed when it holds max_export_batch_size spans or export_delay_ms
 * after its first, and closed batches are sent one at a time, as the SDK's BatchSpanProcessor sends
 * its own: while one is on its way the others wait, and what waits counts against max_queue_size.
 */
import { Wire, type WireSpan } from './wire.ts';

/** One export request's bytes and how many spans it carries. */
export interface HopChunk {
  bytes: Uint8Array;
  count: number;
}

export interface HopBatchOptions {
  maxBatch: number;
  delayMs: number;
  /** The request's bytes before its spans (see requestHeader()), given their length. */
  header(spansLength: number): Buffer;
  /** Its longest value: room left before the spans for it. */
  headerRoom: number;
  /**
   * Sends one chunk, whose bytes lie in `buffer`; `done` when it has been answered or given up on,
   * with the buffer to fill again (the sender may have handed it away meanwhile: then the one it
   * got back, or none).
   */
  send(chunk: HopChunk, buffer: Buffer, done: (buffer: Buffer | undefined) => void): void;
  /** `count` spans left the queue for an export. */
  taken(count: number): void;
}

/** Bytes a hop span takes without content, rounded up: the first buffer's size per span. */
const SPAN_BYTES = 400;
/** Buffers kept for reuse: one being filled while one is on its way. */
const POOLED = 2;

export class HopBatch {
  readonly #o: HopBatchOptions;
  #wire: Wire | undefined;
  #count = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #ready: Array<HopChunk & { buffer: Buffer }> = [];
  #sending = false;
  #idle: Array<() => void> = [];
  /**
   * Buffers of batches that have been answered, for the next batches: a fresh one per batch is
   * memory outside the heap that only a garbage collection gives back.
   */
  readonly #pool: Buffer[] = [];

  constructor(options: HopBatchOptions) {
    this.#o = options;
  }

  add(span: WireSpan): void {
    let w = this.#wire;
    if (w === undefined) {
      w = new Wire(
        this.#pool.pop() ?? this.#o.headerRoom + this.#o.maxBatch * SPAN_BYTES,
        this.#o.headerRoom,
      );
      this.#wire = w;
    }
    w.ensure(8);
    w.byte(0x12); // ScopeSpans.spans
    const at = w.openWide();
    span.writeTo(w);
    w.closeWide(at);
    if (++this.#count >= this.#o.maxBatch) this.#cut();
    else this.#timer ??= setTimeout(() => this.#cut(), this.#o.delayMs).unref();
  }

  /** Closes the batch being filled and resolves when every batch has been answered. */
  flush(): Promise<void> {
    this.#cut();
    if (!this.#sending) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #cut(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const w = this.#wire;
    if (w === undefined || this.#count === 0) return;
    const room = this.#o.headerRoom;
    const header = this.#o.header(w.pos - room);
    w.buf.set(header, room - header.length);
    this.#ready.push({
      bytes: w.buf.subarray(room - header.length, w.pos),
      count: this.#count,
      buffer: w.buf,
    });
    this.#wire = undefined;
    this.#count = 0;
    this.#pump();
  }

  #pump(): void {
    if (this.#sending) return;
    const chunk = this.#ready.shift();
    if (chunk === undefined) {
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#sending = true;
    this.#o.taken(chunk.count);
    this.#o.send({ bytes: chunk.bytes, count: chunk.count }, chunk.buffer, (buffer) => {
      this.#sending = false;
      if (buffer !== undefined && this.#pool.length < POOLED) this.#pool.push(buffer);
      this.#pump();
    });
  }
}
