/**
 * Prometheus metrics (prom-client), served as text at GET /metrics. One registry per process: the
 * definitions live here so any module can count what it knows about without reaching the daemon;
 * e.g. the agent loop counts model tokens with
 *
 *   import { metrics } from '../observability/metrics.ts';
 *   metrics.llmTokens.inc({ listener: 'planner', direction: 'input' }, usage.input);
 *
 * Several daemons in one process (tests) share these series. Label values are listener, tool and
 * outcome names only: never a thread id (unbounded cardinality) and never anything from a payload.
 */
import { recordHop } from './hop-samples.ts';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from './prom.ts';

export const metricsRegistry = new Registry();
// process_resident_memory_bytes, heap, event loop lag, open fds...: what an operator graphs first.
collectDefaultMetrics(metricsRegistry);

const registers = [metricsRegistry];

export const metrics = {
  /** Deliveries by listener and outcome: ok, error, timeout, invalid, busy, dropped. */
  messages: new Counter({
    name: 'organism_messages_total',
    help: 'Messages delivered to listeners, by listener and outcome (ok, error, timeout, invalid, busy, dropped).',
    labelNames: ['listener', 'outcome'] as const,
    registers,
  }),
  /** Seconds from a message's publish to the end of its handling (queue wait included). */
  hopLatency: new Histogram({
    name: 'organism_hop_latency_seconds',
    help: 'Seconds from publishing a message to the end of its handling, queue wait included.',
    labelNames: ['listener'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  }),
  queueDepth: new Gauge({
    name: 'organism_queue_depth',
    help: 'Messages waiting in a listener queue.',
    labelNames: ['listener'] as const,
    registers,
  }),
  handlersRunning: new Gauge({
    name: 'organism_handlers_running',
    help: 'Handlers of a listener running now.',
    labelNames: ['listener'] as const,
    registers,
  }),
  listenerPaused: new Gauge({
    name: 'organism_listener_paused',
    help: '1 while a listener is paused by an operator.',
    labelNames: ['listener'] as const,
    registers,
  }),
  inFlight: new Gauge({
    name: 'organism_messages_in_flight',
    help: 'Messages published and not yet fully handled.',
    registers,
  }),
  threads: new Gauge({
    name: 'organism_threads_live',
    help: 'Threads the registry holds now (not yet collected as idle).',
    registers,
  }),
  threadsStarted: new Counter({
    name: 'organism_threads_started_total',
    help: 'Threads begun by an injection.',
    registers,
  }),
  /** Tool calls by tool, guard verdict (allow, warn, deny, none) and outcome (ok, refused, error). */
  toolCalls: new Counter({
    name: 'organism_tool_calls_total',
    help: 'Tool calls by tool, guard verdict (allow, warn, deny, none) and outcome (ok, refused, error).',
    labelNames: ['tool', 'verdict', 'outcome'] as const,
    registers,
  }),
  /** Model tokens by agent listener and direction (input, output). Incremented by the agent code. */
  llmTokens: new Counter({
    name: 'organism_llm_tokens_total',
    help: 'LLM tokens by agent listener and direction (input, output).',
    labelNames: ['listener', 'direction'] as const,
    registers,
  }),
  injects: new Counter({
    name: 'organism_injects_total',
    help: 'POST /api/v1/inject answers by HTTP status.',
    labelNames: ['status'] as const,
    registers,
  }),
  reloads: new Counter({
    name: 'organism_reloads_total',
    help: 'Hot reloads by result (applied, refused).',
    labelNames: ['result'] as const,
    registers,
  }),
  historyPending: new Gauge({
    name: 'organism_history_pending_lines',
    help: 'Thread history lines waiting to be written to disk.',
    registers,
  }),
  streamClients: new Gauge({
    name: 'organism_stream_clients',
    help: 'WebSocket clients connected to /api/v1/stream.',
    registers,
  }),
  /** Promises that rejected with nobody awaiting them (daemon/unhandled.ts): logged, not fatal. */
  unhandledRejections: new Counter({
    name: 'organism_unhandled_rejections_total',
    help: 'Promises that rejected with nobody awaiting them (a listener or tool left one floating): logged, and the daemon went on.',
    registers,
  }),
  /** Tracing (telemetry:): spans lost, by reason: queue_full (exporter behind), export_failed. */
  traceSpansDropped: new Counter({
    name: 'organism_trace_spans_dropped_total',
    help: 'Trace spans not exported, by reason: queue_full (the export queue was full) or export_failed (the collector refused or did not answer).',
    labelNames: ['reason'] as const,
    registers,
  }),
  traceSpansExported: new Counter({
    name: 'organism_trace_spans_exported_total',
    help: 'Trace spans the collector accepted.',
    registers,
  }),
};

// Children cached per label pair: a hop then costs a Map lookup, not prom-client's label hashing.
const deliveryChildren = new Map<string, { count: { inc(): void }; latency: { observe(v: number): void } }>();

/**
 * One delivery (bus hook): counts it by outcome and, when handled, observes its latency (and keeps
 * it, less any wait for a person, for the dashboard's percentiles: hop-samples.ts).
 */
export function recordDelivery(listener: string, outcome: string, ms: number, thread?: string): void {
  const key = `${listener}\u0000${outcome}`;
  let child = deliveryChildren.get(key);
  if (!child) {
    child = {
      count: metrics.messages.labels(listener, outcome),
      latency: metrics.hopLatency.labels(listener),
    };
    deliveryChildren.set(key, child);
  }
  child.count.inc();
  if (outcome === 'ok' || outcome === 'error' || outcome === 'timeout') {
    child.latency.observe(ms / 1000);
    recordHop(thread, ms);
  }
}

/** Bus state sampled at scrape time (the /metrics route calls this before rendering). */
export interface BusGaugeSample {
  inFlight: number;
  threads: number;
  queues: Record<string, { depth: number; active: number; paused?: boolean }>;
}

export function sampleBusGauges(sample: BusGaugeSample, historyPending = 0, streamClients = 0): void {
  // Reset first, so a listener removed by a reload stops being reported.
  metrics.queueDepth.reset();
  metrics.handlersRunning.reset();
  metrics.listenerPaused.reset();
  for (const [listener, q] of Object.entries(sample.queues)) {
    metrics.queueDepth.set({ listener }, q.depth);
    metrics.handlersRunning.set({ listener }, q.active);
    metrics.listenerPaused.set({ listener }, q.paused ? 1 : 0);
  }
  metrics.inFlight.set(sample.inFlight);
  metrics.threads.set(sample.threads);
  metrics.historyPending.set(historyPending);
  metrics.streamClients.set(streamClients);
}

export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}
