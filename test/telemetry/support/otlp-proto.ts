/**
 * A decoder of the protobuf ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1), to
 * the shape of its JSON encoding (ids in hex, times as decimal strings), so the receiver reads both
 * encodings one way. It reads the wire format field by field, as a collector does, and throws on
 * bytes that do not parse: a malformed request fails the test that sent it.
 */

type Fields = Map<number, Array<number | bigint | Uint8Array>>;

function fields(bytes: Uint8Array): Fields {
  const out: Fields = new Map();
  let pos = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= bytes.length) throw new Error('protobuf: truncated varint');
      const b = bytes[pos++]!;
      v |= BigInt(b & 127) << shift;
      if (b < 128) return v;
      shift += 7n;
      if (shift > 63n) throw new Error('protobuf: varint too long');
    }
  };
  while (pos < bytes.length) {
    const key = Number(varint());
    const field = key >> 3;
    const type = key & 7;
    let value: number | bigint | Uint8Array;
    if (type === 0) value = varint();
    else if (type === 1) {
      if (pos + 8 > bytes.length) throw new Error('protobuf: truncated fixed64');
      value = bytes.subarray(pos, pos + 8); // read by the field's type: fixed64 or double
      pos += 8;
    } else if (type === 5) {
      if (pos + 4 > bytes.length) throw new Error('protobuf: truncated fixed32');
      value = Buffer.from(bytes.subarray(pos, pos + 4)).readUInt32LE();
      pos += 4;
    } else if (type === 2) {
      const length = Number(varint());
      if (pos + length > bytes.length) throw new Error(`protobuf: field ${field} runs past its message`);
      value = bytes.subarray(pos, pos + length);
      pos += length;
    } else throw new Error(`protobuf: wire type ${type} of field ${field}`);
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

const bytesOf = (f: Fields, n: number): Uint8Array[] => (f.get(n) ?? []) as Uint8Array[];
const one = (f: Fields, n: number) => f.get(n)?.[0];
const text = (f: Fields, n: number): string | undefined => {
  const v = one(f, n);
  return v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : undefined;
};
const hex = (f: Fields, n: number): string | undefined => {
  const v = one(f, n);
  return v instanceof Uint8Array ? Buffer.from(v).toString('hex') : undefined;
};

const fixed64 = (f: Fields, n: number): bigint | undefined => {
  const v = one(f, n);
  return v instanceof Uint8Array ? Buffer.from(v).readBigUInt64LE() : undefined;
};

function anyValue(bytes: Uint8Array): Record<string, unknown> {
  const f = fields(bytes);
  if (f.has(1)) return { stringValue: text(f, 1) };
  if (f.has(2)) return { boolValue: one(f, 2) === 1n };
  if (f.has(3)) return { intValue: String(BigInt.asIntN(64, one(f, 3) as bigint)) };
  if (f.has(4)) return { doubleValue: Buffer.from(one(f, 4) as Uint8Array).readDoubleLE() };
  if (f.has(5)) return { arrayValue: { values: bytesOf(fields(one(f, 5) as Uint8Array), 1).map(anyValue) } };
  return {};
}

function keyValues(list: Uint8Array[]): Array<{ key: string; value: Record<string, unknown> }> {
  return list.map((kv) => {
    const f = fields(kv);
    return { key: text(f, 1) ?? '', value: anyValue((one(f, 2) as Uint8Array) ?? new Uint8Array()) };
  });
}

function span(bytes: Uint8Array): Record<string, unknown> {
  const f = fields(bytes);
  const status = fields((one(f, 15) as Uint8Array) ?? new Uint8Array());
  return {
    traceId: hex(f, 1),
    spanId: hex(f, 2),
    parentSpanId: hex(f, 4) ?? '',
    name: text(f, 5),
    kind: Number(one(f, 6) ?? 0n),
    startTimeUnixNano: String(fixed64(f, 7)),
    endTimeUnixNano: String(fixed64(f, 8)),
    attributes: keyValues(bytesOf(f, 9)),
    status: {
      code: Number(one(status, 3) ?? 0n),
      ...(status.has(2) ? { message: text(status, 2) } : {}),
    },
    flags: one(f, 16),
  };
}

/** The request as its JSON encoding would have it. */
export function decodeTraceRequest(body: Uint8Array): {
  resourceSpans: Array<{
    resource: { attributes: ReturnType<typeof keyValues> };
    scopeSpans: Array<{ scope: { name?: string; version?: string }; spans: Array<Record<string, any>> }>;
  }>;
} {
  return {
    resourceSpans: bytesOf(fields(body), 1).map((rsBytes) => {
      const rs = fields(rsBytes);
      const resource = fields((one(rs, 1) as Uint8Array) ?? new Uint8Array());
      return {
        resource: { attributes: keyValues(bytesOf(resource, 1)) },
        scopeSpans: bytesOf(rs, 2).map((ssBytes) => {
          const ss = fields(ssBytes);
          const scope = fields((one(ss, 1) as Uint8Array) ?? new Uint8Array());
          return {
            scope: { name: text(scope, 1), ...(scope.has(2) ? { version: text(scope, 2) } : {}) },
            spans: bytesOf(ss, 2).map(span),
          };
        }),
      };
    }),
  };
}
