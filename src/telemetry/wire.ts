/**
 * OTLP protobuf (opentelemetry/proto/trace/v1) for hop spans, written straight into the bytes of an
 * export request as each hop ends. The SDK's path (a ReadableSpan object per span, held in the queue,
 * then the SDK's serializer) cost more CPU than the hop itself and kept every queued span alive for
 * the garbage collector; this writes one fixed shape with no object per span. Field order and
 * encoding are the SDK's ProtobufTraceSerializer's, so a collector sees the same bytes
 * (test/telemetry/wire.test.ts compares them).
 */

/** A span that writes its own Span message. */
export interface WireSpan {
  writeTo(w: Wire): void;
}

/** A growable buffer with the protobuf wire primitives the span message needs. */
export class Wire {
  buf: Buffer;
  pos: number;

  /** `headroom` bytes are left free at the start, for the request's header (see request()). */
  /** A new buffer of `size` bytes, or `reuse` (its content overwritten). */
  constructor(size: number | Buffer, headroom = 0) {
    this.buf = typeof size === 'number' ? Buffer.allocUnsafe(Math.max(size, headroom + 64)) : size;
    this.pos = headroom;
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  byte(b: number): void {
    this.buf[this.pos++] = b;
  }

  varint(v: number): void {
    const buf = this.buf;
    while (v > 127) {
      buf[this.pos++] = (v & 127) | 128;
      v = Math.floor(v / 128);
    }
    buf[this.pos++] = v;
  }

  /** Reserves one byte for the length of a nested message; close() fills it in. */
  open(): number {
    return this.pos++;
  }

  /** Writes the length of what follows `at` into it, moving the content when it takes more than one byte. */
  close(at: number): void {
    const length = this.pos - at - 1;
    if (length < 128) {
      this.buf[at] = length;
      return;
    }
    this.resized(at, 1, length);
  }

  /**
   * Reserves two bytes for the length of a nested message that will most likely take two (128 to
   * 16,383 bytes: a hop span); closeWide() fills them in, and moves the content only when the
   * length needs another size (protobuf lengths are written in as few bytes as they need).
   */
  openWide(): number {
    this.pos += 2;
    return this.pos - 2;
  }

  closeWide(at: number): void {
    const length = this.pos - at - 2;
    if (length >= 128 && length < 16_384) {
      this.buf[at] = (length & 127) | 128;
      this.buf[at + 1] = length >>> 7;
      return;
    }
    this.resized(at, 2, length);
  }

  /** Writes `length` at `at` where `reserved` bytes were kept for it, moving the content to fit. */
  private resized(at: number, reserved: number, length: number): void {
    const size = varintSize(length);
    if (size > reserved) this.ensure(size - reserved);
    this.buf.copyWithin(at + size, at + reserved, this.pos);
    this.pos += size - reserved;
    const end = this.pos;
    this.pos = at;
    this.varint(length);
    this.pos = end;
  }

  /** A length-delimited UTF-8 string (its tag written by the caller). */
  string(s: string): void {
    const n = s.length;
    this.ensure(3 * n + 5);
    const buf = this.buf;
    // Short ASCII (the routing record's names and ids): one length byte, copied in a loop.
    if (n < 128) {
      let p = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 127) break;
        buf[p++] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos = p;
        return;
      }
    }
    this.varint(Buffer.byteLength(s));
    this.pos += buf.write(s, this.pos);
  }

  /** Lower-case hex id as bytes (trace id 16, span id 8), length-prefixed. */
  hex(id: string): void {
    const n = id.length >> 1;
    const buf = this.buf;
    // The position in a local: a field written back each byte cost more than the bytes.
    let p = this.pos;
    buf[p++] = n;
    for (let i = 0; i < 2 * n; i += 2)
      buf[p++] = (nibble(id.charCodeAt(i)) << 4) | nibble(id.charCodeAt(i + 1));
    this.pos = p;
  }

  /** `n` bytes of an id from `src` at `at`, length-prefixed (a loop: set() would need a subarray). */
  id(src: Uint8Array, at: number, n: number): void {
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = n;
    for (let i = 0; i < n; i++) buf[p++] = src[at + i]!;
    this.pos = p;
  }

  fixed32(v: number): void {
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.pos += 4;
  }

  /** Epoch milliseconds as fixed64 nanoseconds, rounded as the SDK's millisToHrTime rounds. */
  timeNanos(epochMillis: number): void {
    let seconds = Math.trunc(epochMillis / 1000);
    // epochMillis % 1000 as a subtraction (exact: the two are within a factor of two), which the
    // CPU does in one instruction where `%` on doubles is a call to fmod. The division may round
    // up to the next whole second: the remainder is then the last millisecond of the one before.
    let rest = epochMillis - seconds * 1000;
    if (rest < 0) {
      seconds--;
      rest += 1000;
    }
    const nanos = Math.round(rest * 1e6);
    // seconds * 1e9 split in two 32-bit halves, made once a second (every span of that second adds
    // only its nanoseconds).
    if (seconds !== second.seconds) secondNanos(seconds);
    let low = second.low + nanos;
    let high = second.high;
    if (low >= 0x100000000) {
      low -= 0x100000000;
      high++;
    }
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = low & 0xff;
    buf[p++] = (low >>> 8) & 0xff;
    buf[p++] = (low >>> 16) & 0xff;
    buf[p++] = low >>> 24;
    buf[p++] = high & 0xff;
    buf[p++] = (high >>> 8) & 0xff;
    buf[p++] = (high >>> 16) & 0xff;
    buf[p++] = high >>> 24;
    this.pos = p;
  }

  /** A few bytes encoded once (a loop: TypedArray.set costs more than it copies at this size). */
  bytes(b: Uint8Array): void {
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** KeyValue{key, AnyValue{string_value}} as field `field` of the enclosing message. */
  stringAttribute(field: number, key: Buffer, value: string): void {
    this.ensure(key.length + 3 * value.length + 16);
    this.byte((field << 3) | 2);
    const kv = this.open();
    this.bytes(key);
    this.byte(0x12);
    const any = this.open();
    this.byte(0x0a);
    this.string(value);
    this.close(any);
    this.close(kv);
  }

  intAttribute(field: number, key: Buffer, value: number): void {
    this.ensure(key.length + 20);
    this.byte((field << 3) | 2);
    const kv = this.open();
    this.bytes(key);
    this.byte(0x12);
    const any = this.open();
    this.byte(0x18);
    this.varint(value);
    this.close(any);
    this.close(kv);
  }
}

/** The second timeNanos wrote last (one slot), as nanoseconds in two 32-bit halves. */
const second = { seconds: Number.NaN, low: 0, high: 0 };

function secondNanos(seconds: number): void {
  // seconds * 1e9 passes 2^53: split seconds so each product stays exact.
  const lowProduct = (seconds & 0xffff) * 1e9;
  const highProduct = Math.floor(seconds / 0x10000) * 1e9;
  const low = (lowProduct >>> 0) + (((highProduct & 0xffff) * 0x10000) >>> 0);
  second.seconds = seconds;
  second.low = low >>> 0;
  second.high =
    (Math.floor(lowProduct / 0x100000000) +
      Math.floor(highProduct / 0x10000) +
      Math.floor(low / 0x100000000)) >>>
    0;
}

function nibble(c: number): number {
  return c <= 57 ? c - 48 : c - 87;
}

/** How many bytes `varint` writes for `v`. */
export function varintSize(v: number): number {
  let size = 1;
  while (v > 127) {
    v = Math.floor(v / 128);
    size++;
  }
  return size;
}

/** KeyValue.key (field 1) with its tag and length, for a key written on every span. */
export function keyBytes(key: string): Buffer {
  const w = new Wire(key.length * 3 + 8);
  w.byte(0x0a);
  w.string(key);
  return Buffer.from(w.buf.subarray(0, w.pos));
}

export interface WireResource {
  attributes: Record<string, unknown>;
}

/**
 * The bytes before the spans of an ExportTraceServiceRequest holding one ResourceSpans with one
 * ScopeSpans: resource (string attributes) and scope, and the lengths of both enclosing messages,
 * given the spans' total length.
 */
export function requestHeader(
  resource: WireResource,
  scope: { name: string; version?: string },
  spansLength: number,
): Buffer {
  const r = new Wire(256);
  // Resource: attributes (1), dropped_attributes_count (2) as the SDK writes them.
  for (const [key, value] of Object.entries(resource.attributes)) {
    if (typeof value === 'string') r.stringAttribute(1, keyBytes(key), value);
    else if (typeof value === 'number' && Number.isInteger(value)) r.intAttribute(1, keyBytes(key), value);
  }
  r.byte(0x10);
  r.varint(0);
  const s = new Wire(64);
  s.byte(0x0a);
  s.string(scope.name);
  if (scope.version) {
    s.byte(0x12);
    s.string(scope.version);
  }
  // ScopeSpans: scope (1), spans (2)...; ResourceSpans: resource (1), scope_spans (2).
  const scopeSpans = 1 + varintSize(s.pos) + s.pos + spansLength;
  const resourceSpans = 1 + varintSize(r.pos) + r.pos + 1 + varintSize(scopeSpans) + scopeSpans;
  const h = new Wire(r.pos + s.pos + 32);
  h.byte(0x0a);
  h.varint(resourceSpans);
  h.byte(0x0a);
  h.varint(r.pos);
  h.buf.set(r.buf.subarray(0, r.pos), h.pos);
  h.pos += r.pos;
  h.byte(0x12);
  h.varint(scopeSpans);
  h.byte(0x0a);
  h.varint(s.pos);
  h.buf.set(s.buf.subarray(0, s.pos), h.pos);
  h.pos += s.pos;
  return Buffer.from(h.buf.subarray(0, h.pos));
}
