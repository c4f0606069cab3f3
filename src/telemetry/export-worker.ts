/**
 * The export thread's entry (export-thread.ts): posts each hop batch it is given to the collector
 * with the SDK's delegate, and answers with the outcome and the batch's buffer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportReady, ExportReply, ExportRequest } from './export-protocol.ts';
import { type OtlpTarget, otlpDelegate } from './otlp-delegate.ts';

const port = parentPort!;
const delegate = otlpDelegate(workerData as OtlpTarget);

port.on('message', (request: ExportRequest) => {
  const bytes = new Uint8Array(request.buffer, request.offset, request.length);
  delegate.export({ bytes, count: request.count }, (result) => {
    const reply: ExportReply = {
      id: request.id,
      ok: result.code === ExportResultCode.SUCCESS,
      buffer: request.buffer,
    };
    if (!reply.ok) reply.error = result.error?.message ?? 'export failed';
    port.postMessage(reply, [request.buffer]);
  });
});
port.postMessage({ ready: true } satisfies ExportReady);
