/**
 * The SDK's OTLP/HTTP export delegate (its retries, timeout, headers), as both sides of the export
 * use it: the daemon's thread for the SDK's spans (agent, chat, tool), the export thread
 * (export-worker.ts) for hop batches already encoded (hop-batch.ts).
 */
import type { ExportResult } from '@opentelemetry/core';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import type { ISerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { HopChunk } from './hop-batch.ts';

/** What the export delegate takes: the SDK's spans, or a hop batch already encoded. */
export type ExportItems = ReadableSpan[] | HopChunk;

export interface ExportDelegate {
  export(items: ExportItems, done: (result: ExportResult) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface OtlpTarget {
  /** The traces URL (tracesUrl). */
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/**
 * The delegate for `target`. `serializer` makes a request's body of the items (and reads the
 * collector's answer, which the delegate only ever logs through the OpenTelemetry API's diag
 * logger, which the daemon does not set).
 */
export function otlpDelegate(
  target: OtlpTarget,
  serializer: ISerializer<ExportItems, unknown>,
): ExportDelegate {
  return createOtlpHttpExportDelegate(
    convertLegacyHttpOptions(
      { url: target.url, headers: target.headers, timeoutMillis: target.timeoutMs },
      'TRACES',
      'v1/traces',
      {
        'Content-Type': 'application/x-protobuf',
      },
    ),
    serializer,
    'otlp_http_span_exporter',
    { name: 'span', countItems: (items: ExportItems) => (Array.isArray(items) ? items.length : items.count) },
    undefined,
  );
}
