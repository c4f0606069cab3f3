/**
 * The OpenTelemetry side, imported only when organism.yaml has a `telemetry:` section (index.ts):
 * hop spans (hop.ts) sampled by the thread's first hop or their parent's flag, agent, chat and tool
 * spans from a tracer provider with the same parent-based ratio sampler, all exported over OTLP/HTTP
 * in protobuf through the SDK's export delegate (its retries, timeout, headers). Hop spans are
 * written as protobuf when they end and sent in batches of their own (hop-batch.ts), from a thread
 * of their own (export-thread.ts); the others go through a BatchSpanProcessor. Both count against
 * one bounded queue. An exporter that is down or slow never slows the bus: a span that finds the
 * queue full is dropped, and every span lost (queue full, or an export the collector refused or
 * never answered) is counted in /metrics.
 */
import { ROOT_CONTEXT, TraceFlags } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { type IExportTraceServiceResponse, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  SamplingDecision,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { ExportThread } from './export-thread.ts';
import { Hop, type HopSink } from './hop.ts';
import { HopBatch, type HopChunk } from './hop-batch.ts';
import { newSpanIds, SpanIds, traceIds } from './ids.ts';
import { CONTENT_LIMIT, otlpHeaders, type TelemetrySection, tracesUrl } from './options.ts';
import { type ExportDelegate, type ExportItems, otlpDelegate } from './otlp-delegate.ts';
import { formatTraceparent, parseTraceparent, threadTraceId } from './traceparent.ts';
import type { HopMessage, HopSpan, Tracing } from './types.ts';
import { requestHeader, type WireSpan } from './wire.ts';

/** Protobuf for the SDK's spans; a hop batch's bytes as they are. */
const serializer = {
  serializeRequest: (items: ExportItems): Uint8Array | undefined =>
    Array.isArray(items) ? ProtobufTraceSerializer.serializeRequest(items) : items.bytes,
  deserializeResponse: (data: Uint8Array): IExportTraceServiceResponse =>
    ProtobufTraceSerializer.deserializeResponse(data),
};

/** Counts of what became of the spans, for /metrics and the bench. */
export interface SpanCounts {
  exported: number;
  /** The queue was full when the span ended. */
  queueFull: number;
  /** In an export the collector refused or did not answer in time. */
  exportFailed: number;
}

export interface TelemetryHooks {
  /** Called for every span lost, with why (the daemon counts them in /metrics). */
  dropped?(reason: 'queue_full' | 'export_failed', count: number): void;
  exported?(count: number): void;
  /** An export failed (called at most once a minute, with the collector's answer or the error). */
  exportError?(message: string): void;
}

export interface OtelOptions {
  env: NodeJS.ProcessEnv;
  /** service.instance.id: one per daemon, so two daemons' spans in one trace are told apart. */
  instanceId: string;
  version?: string;
  hooks?: TelemetryHooks;
}

export interface Telemetry {
  readonly tracing: Tracing;
  readonly endpoint: string;
  counts(): SpanCounts;
  /** Exports what is queued (bounded by otlp.timeout_ms); never rejects. */
  flush(): Promise<void>;
  /** Exports what is queued, then stops (spans ended after this are not exported); never rejects. */
  shutdown(): Promise<void>;
}

/**
 * In front of the BatchSpanProcessor: counts the spans it holds (handed over and not yet taken by
 * an export) and drops, counted, what would go past max_queue_size, instead of the processor
 * dropping them uncounted.
 */
class BoundedQueue implements SpanProcessor {
  queued = 0;
  readonly #inner: SpanProcessor;
  readonly #max: number;
  readonly #drop: () => void;

  constructor(inner: SpanProcessor, max: number, drop: () => void) {
    this.#inner = inner;
    this.#max = max;
    this.#drop = drop;
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.admit()) this.queue(span);
  }

  /** Room for one more span? If not, the span is counted as dropped. */
  admit(): boolean {
    if (this.queued < this.#max) return true;
    this.#drop();
    return false;
  }

  queue(span: ReadableSpan): void {
    this.queued++;
    this.#inner.onEnd(span);
  }

  /** A hop span, to the hop batches. */
  queueHop(span: WireSpan, hops: HopBatch): void {
    this.queued++;
    hops.add(span);
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

/**
 * The OTLP exporter, counting what it takes from the queue and what it could not deliver. A batch
 * still unanswered when it shuts down (the processor stops waiting after its export timeout, and a
 * retrying exporter may answer later or never) is counted as failed then, once.
 */
class CountingExporter implements SpanExporter {
  readonly #pending = new Set<{ count: number }>();

  constructor(
    private readonly inner: ExportDelegate,
    private readonly hops: ExportThread,
    private readonly queue: () => BoundedQueue,
    private readonly result: (count: number, result: ExportResult) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.queue().queued -= spans.length;
    this.#send(spans, spans.length, done);
  }

  /**
   * A hop batch (its spans left the queue when the batch was taken), from the export thread when
   * one is ready, else from this one; `done` gets the buffer to fill again.
   */
  exportHops(chunk: HopChunk, buffer: Buffer, done: (buffer: Buffer | undefined) => void): void {
    const batch = this.#track(chunk.count);
    const sent = this.hops.send(chunk, buffer, (result, returned) => {
      this.#settle(batch, result);
      done(returned);
    });
    if (sent) return;
    // No thread ready: from this one, as the SDK's spans go.
    this.inner.export(chunk, (result) => {
      this.#settle(batch, result);
      done(buffer);
    });
  }

  #send(items: ExportItems, count: number, done: (result: ExportResult) => void): void {
    const batch = this.#track(count);
    this.inner.export(items, (result) => {
      this.#settle(batch, result);
      done(result);
    });
  }

  #track(count: number): { count: number } {
    const batch = { count };
    this.#pending.add(batch);
    return batch;
  }

  /** Counts a batch's outcome, once (not when failPending counted it already). */
  #settle(batch: { count: number }, result: ExportResult): void {
    if (this.#pending.delete(batch)) this.result(batch.count, result);
  }

  async shutdown(): Promise<void> {
    try {
      await this.inner.shutdown();
    } finally {
      this.failPending();
    }
  }

  /**
   * Counts the batches still unanswered as failed. Also called after the provider's shutdown: when
   * the processor's last flush times out it never shuts the exporter down.
   */
  failPending(): void {
    for (const batch of this.#pending) {
      this.result(batch.count, { code: ExportResultCode.FAILED, error: new Error('unanswered at shutdown') });
    }
    this.#pending.clear();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
}

export function createTelemetry(section: TelemetrySection, options: OtelOptions): Telemetry {
  const url = tracesUrl(section.otlp.endpoint);
  const headers = otlpHeaders(section.otlp.headers_env, options.env);
  const counts: SpanCounts = { exported: 0, queueFull: 0, exportFailed: 0 };
  const hooks = options.hooks ?? {};
  let lastError = 0;
  const target = { url, headers, timeoutMs: section.otlp.timeout_ms };
  const exporter = otlpDelegate(target, serializer);
  const exportThread = new ExportThread(target);
  let queue: BoundedQueue | undefined;
  const counting = new CountingExporter(
    exporter,
    exportThread,
    () => queue!,
    (count, result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        counts.exported += count;
        hooks.exported?.(count);
        return;
      }
      counts.exportFailed += count;
      hooks.dropped?.('export_failed', count);
      const now = Date.now();
      if (now - lastError >= 60_000) {
        lastError = now;
        hooks.exportError?.(result.error?.message ?? 'export failed');
      }
    },
  );
  const maxBatch = Math.min(section.max_export_batch_size, section.max_queue_size);
  const batch = new BatchSpanProcessor(counting, {
    maxQueueSize: section.max_queue_size,
    maxExportBatchSize: maxBatch,
    scheduledDelayMillis: section.export_delay_ms,
    exportTimeoutMillis: section.otlp.timeout_ms + 1_000,
  });
  queue = new BoundedQueue(batch, section.max_queue_size, () => {
    counts.queueFull++;
    hooks.dropped?.('queue_full', 1);
  });
  // A thread's first hop decides for its trace (the same in every daemon: the trace id derives
  // from the thread); every later hop follows the flag its parent carried.
  const root = section.sample_ratio >= 1 ? undefined : new TraceIdRatioBasedSampler(section.sample_ratio);
  const resource = resourceFromAttributes({
    'service.name': section.service_name,
    'service.instance.id': options.instanceId,
    ...(options.version ? { 'service.version': options.version } : {}),
  });
  const provider = new BasicTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: root ?? new AlwaysOnSampler() }),
    spanProcessors: [queue],
    spanLimits: { attributeValueLengthLimit: CONTENT_LIMIT + 16 },
  });
  const scope = { name: 'organism', ...(options.version ? { version: options.version } : {}) };
  const bounded = queue;
  let closed = false;
  const hops = new HopBatch({
    maxBatch,
    delayMs: section.export_delay_ms,
    header: (length) => requestHeader(resource, scope, length),
    headerRoom: requestHeader(resource, scope, 2 ** 31).length,
    send: (chunk, buffer, done) => counting.exportHops(chunk, buffer, done),
    taken: (count) => {
      bounded.queued -= count;
    },
  });
  const sink: HopSink = {
    factory: {
      tracer: provider.getTracer('organism', options.version),
      captureContent: section.capture_content,
    },
    // After shutdown a hop is not exported (as the SDK's spans are not), nor counted.
    admit: () => !closed && bounded.admit(),
    queue: (span) => bounded.queueHop(span, hops),
  };

  const tracing: Tracing = {
    captureContent: section.capture_content,
    hop(message: HopMessage, traceparent: string | undefined, payloadXml?: string): HopSpan {
      const parent = parseTraceparent(traceparent);
      // A hop's parent is the span that published its message, in this process or another: remote.
      // A hop span of this process is read back as its own ids (ownTraceparent), trace included.
      if (parent) {
        const trace = parent instanceof SpanIds ? parent.trace : traceIds(parent.traceId);
        const ids = newSpanIds(trace, parent.flags & TraceFlags.SAMPLED);
        return new Hop(sink, message, ids, parent, true, payloadXml);
      }
      const traceId = threadTraceId(message.thread);
      const sampled =
        root === undefined ||
        root.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
      const ids = newSpanIds(traceIds(traceId), sampled ? TraceFlags.SAMPLED : TraceFlags.NONE);
      return new Hop(sink, message, ids, undefined, false, payloadXml);
    },
    accept(traceparent) {
      const parsed = parseTraceparent(traceparent);
      return parsed ? formatTraceparent(parsed.traceId, parsed.spanId, parsed.flags) : undefined;
    },
  };

  return {
    tracing,
    endpoint: url,
    counts: () => ({ ...counts }),
    // A failed export is counted (and logged) where it fails: these only wait, they never throw.
    flush: () =>
      Promise.all([hops.flush(), provider.forceFlush()])
        .then(() => {})
        .catch(() => {}),
    shutdown: async () => {
      if (closed) return;
      closed = true;
      await hops.flush();
      await provider
        .shutdown()
        .catch(() => {})
        .finally(() => counting.failPending());
      await exportThread.close();
    },
  };
}
