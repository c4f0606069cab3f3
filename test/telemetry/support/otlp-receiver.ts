/**
 * A real OTLP/HTTP receiver on 127.0.0.1, as a collector runs one: POST /v1/traces with
 * ExportTraceServiceRequest in protobuf (what the daemon sends) or its JSON encoding, gzip when the
 * exporter compresses. It decodes every request and keeps the spans, flattened with their
 * resource's attributes, for the tests to read.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeTraceRequest } from './otlp-proto.ts';

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  status: { code?: number; message?: string };
  start: bigint;
  end: bigint;
}

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = value(kv.value);
  return out;
}

export interface OtlpReceiver {
  /** Base URL to put in telemetry.otlp.endpoint. */
  url: string;
  port: number;
  spans: ReceivedSpan[];
  /** Raw request bodies as text (protobuf keeps strings as UTF-8): to search for content that must not be there. */
  bodies: string[];
  requests: number;
  /** Content-Type of the first request. */
  contentType: string | undefined;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = {
    url: '',
    port: 0,
    spans: [],
    bodies: [],
    requests: 0,
    contentType: undefined,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      receiver.requests++;
      receiver.contentType ??= req.headers['content-type'];
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const text = body.toString('utf8');
      receiver.bodies.push(text);
      const protobuf = req.headers['content-type'] === 'application/x-protobuf';
      const request = (protobuf ? decodeTraceRequest(body) : JSON.parse(text)) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{ spans?: Array<Record<string, any>> }>;
        }>;
      };
      for (const rs of request.resourceSpans ?? []) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            receiver.spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              attributes: attributes(s.attributes),
              resource,
              status: s.status ?? {},
              start: BigInt(s.startTimeUnixNano),
              end: BigInt(s.endTimeUnixNano),
            });
          }
        }
      }
      // An empty ExportTraceServiceResponse: no partial success.
      if (protobuf) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** The spans of one trace, by name; throws when a name is missing or repeated. */
export function byName(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1)
    throw new Error(`${found.length} spans named ${name} in [${spans.map((s) => s.name).join(', ')}]`);
  return found[0]!;
}
