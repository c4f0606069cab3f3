/**
 * The export thread's entry (export-thread.ts): posts each hop batch it is given to the collector
 * with the SDK's delegate, and answers with the outcome and the batch's buffer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ExportReady, ExportReply, ExportRequest } from './export-protocol.ts';
import type { HopChunk } from './hop-batch.ts';
import { type ExportItems, type OtlpTarget, otlpDelegate } from './otlp-delegate.ts';

/** ExportResultCode.SUCCESS (@opentelemetry/core, not loaded here for one constant). */
const SUCCESS = 0;

const port = parentPort!;
// A batch's bytes as they are; the collector's answer is not decoded (see otlpDelegate): this
// thread loads no protobuf library.
const delegate = otlpDelegate(workerData as OtlpTarget, {
  serializeRequest: (items: ExportItems) => (items as HopChunk).bytes,
  deserializeResponse: () => ({}),
});

port.on('message', (request: ExportRequest) => {
  const bytes = new Uint8Array(request.buffer, request.offset, request.length);
  delegate.export({ bytes, count: request.count }, (result) => {
    const reply: ExportReply = {
      id: request.id,
      ok: result.code === SUCCESS,
      buffer: request.buffer,
    };
    if (!reply.ok) reply.error = result.error?.message ?? 'export failed';
    port.postMessage(reply, [request.buffer]);
  });
});
port.postMessage({ ready: true } satisfies ExportReady);
