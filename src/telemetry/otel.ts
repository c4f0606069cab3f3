/**
 * The OpenTelemetry side, imported only when organism.yaml has a `telemetry:` section (index.ts):
 * a tracer provider with a parent-based ratio sampler, spans exported over OTLP/HTTP (JSON) through
 * a BatchSpanProcessor whose queue is bounded. An exporter that is down or slow never slows the
 * bus: a span that finds the queue full is dropped, and every span lost (queue full, or an export
 * the collector refused or never answered) is counted in /metrics.
 */
import { ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { CONTENT_LIMIT, otlpHeaders, type TelemetrySection, tracesUrl } from './options.ts';
import { contentAttribute, Hop, type SpanFactory } from './spans.ts';
import { formatTraceparent, parseTraceparent, threadTraceId } from './traceparent.ts';
import type { HopMessage, HopSpan, Tracing } from './types.ts';

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
  /** Exports what is queued (bounded by otlp.timeout_ms). */
  flush(): Promise<void>;
  /** Exports what is queued, then stops; spans ended after this are not exported. */
  shutdown(): Promise<void>;
}

/**
 * Root spans get the trace id their thread derives (see threadTraceId): the tracing sets `next`
 * just before it starts one, synchronously, and the SDK asks for a trace id only for a root.
 */
class ThreadIds implements IdGenerator {
  next: string | undefined;
  readonly #random = new RandomIdGenerator();
  generateTraceId = (): string => {
    const id = this.next;
    if (id === undefined) return this.#random.generateTraceId();
    this.next = undefined;
    return id;
  };
  generateSpanId = (): string => this.#random.generateSpanId();
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
    if (this.queued >= this.#max) {
      this.#drop();
      return;
    }
    this.queued++;
    this.#inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

/** The OTLP exporter, counting what it takes from the queue and what it could not deliver. */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly queue: () => BoundedQueue,
    private readonly result: (count: number, result: ExportResult) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.queue().queued -= spans.length;
    this.inner.export(spans, (result) => {
      this.result(spans.length, result);
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export function createTelemetry(section: TelemetrySection, options: OtelOptions): Telemetry {
  const url = tracesUrl(section.otlp.endpoint);
  const headers = otlpHeaders(section.otlp.headers_env, options.env);
  const counts: SpanCounts = { exported: 0, queueFull: 0, exportFailed: 0 };
  const hooks = options.hooks ?? {};
  let lastError = 0;
  const exporter = new OTLPTraceExporter({ url, headers, timeoutMillis: section.otlp.timeout_ms });
  let queue: BoundedQueue | undefined;
  const counting = new CountingExporter(
    exporter,
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
  const batch = new BatchSpanProcessor(counting, {
    maxQueueSize: section.max_queue_size,
    maxExportBatchSize: Math.min(section.max_export_batch_size, section.max_queue_size),
    scheduledDelayMillis: section.export_delay_ms,
    exportTimeoutMillis: section.otlp.timeout_ms + 1_000,
  });
  queue = new BoundedQueue(batch, section.max_queue_size, () => {
    counts.queueFull++;
    hooks.dropped?.('queue_full', 1);
  });
  const ids = new ThreadIds();
  const root =
    section.sample_ratio >= 1 ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(section.sample_ratio);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': section.service_name,
      'service.instance.id': options.instanceId,
      ...(options.version ? { 'service.version': options.version } : {}),
    }),
    sampler: new ParentBasedSampler({ root }),
    idGenerator: ids,
    spanProcessors: [queue],
    spanLimits: { attributeValueLengthLimit: CONTENT_LIMIT + 16 },
  });
  const factory: SpanFactory = {
    tracer: provider.getTracer('organism', options.version),
    captureContent: section.capture_content,
  };

  const tracing: Tracing = {
    captureContent: section.capture_content,
    hop(message: HopMessage, traceparent: string | undefined, payloadXml?: string): HopSpan {
      const parent = parseTraceparent(traceparent);
      const context = parent
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.spanId,
            traceFlags: parent.flags & TraceFlags.SAMPLED,
            isRemote: true,
          })
        : ROOT_CONTEXT;
      if (!parent) ids.next = threadTraceId(message.thread);
      const attributes: Record<string, string | number> = {
        'organism.thread': message.thread,
        'organism.from': message.from,
        'organism.to': message.to,
        'organism.tag': message.tag,
        'organism.kind': message.kind,
        'organism.hop': message.hop,
        'organism.message.id': message.id,
      };
      if (factory.captureContent && payloadXml !== undefined)
        attributes['organism.payload'] = contentAttribute(payloadXml);
      const span = factory.tracer.startSpan(
        `deliver ${message.to}`,
        { kind: SpanKind.CONSUMER, attributes },
        context,
      );
      ids.next = undefined;
      return new Hop(factory, span, message.thread);
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
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
