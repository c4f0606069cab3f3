/**
 * The Bus's public options and observer types. They live apart from bus.ts so the parts of the bus
 * can name them without importing the Bus class; bus.ts re-exports them, and callers keep
 * importing them from there.
 */
import type { Logger } from 'pino';
import type { BusSection, LimitsSection } from '../config/types.ts';
import type { Tracing } from '../telemetry/types.ts';
import type { CallRequest, ToolResult } from '../tools/types.ts';
import type { ThreadHistory } from './history/index.ts';
import type { ThreadStore } from './thread-store.ts';

/** How the bus reaches the tool dispatcher (src/tools), without depending on it. */
export interface ToolPort {
  call(request: CallRequest): Promise<ToolResult>;
}

export interface BusOptions {
  limits: LimitsSection;
  bus: BusSection;
  logger: Logger;
  tools?: ToolPort;
  /** Threads whose history is kept in memory (when the bus makes its own history). */
  historyMaxThreads?: number;
  /** A history to use instead of a fresh one: the daemon's, replayed from disk and written back to it. */
  history?: ThreadHistory;
  /** Observers for metrics and the live stream; absent costs nothing per hop. */
  hooks?: BusHooks;
  /** Spans per hop (src/telemetry, `telemetry:`); absent costs one check per hop. */
  tracing?: Tracing;
  /**
   * Thread state shared with the other daemons of the organism (Redis transport): registry and
   * history written through, threads loaded on delivery, in-flight counted across daemons.
   * Absent: a LocalThreadStore, the registry and history in memory being the whole truth (one daemon).
   */
  threadStore?: ThreadStore;
}

/** What became of one delivery: handled (ok, error, timeout) or refused before its handler. */
export type DeliveryOutcome = 'ok' | 'error' | 'timeout' | 'invalid' | 'busy' | 'dropped';

/**
 * Observers of the bus. Called on the hot path and synchronously, so they must be cheap and must
 * not throw (the daemon's hooks update prom-client counters and push to WebSocket clients).
 */
export interface BusHooks {
  /** A delivery to `listener` finished; `ms` runs from publish to the end of handling. */
  delivered?(listener: string, outcome: DeliveryOutcome, ms: number, thread: string): void;
  /** A thread began (injection), has nothing in flight any more, or was stopped (budget or kill). */
  thread?(thread: string, event: 'started' | 'idle' | 'stopped'): void;
}

/** What a hot reload did to the listeners (Bus.reconfigure). */
export interface ReconfigureResult {
  added: string[];
  removed: string[];
  /** Config, module or tag changed; queued messages finish with the version that accepted them. */
  replaced: string[];
  unchanged: string[];
}
