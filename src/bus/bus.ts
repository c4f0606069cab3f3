/**
 * The bus: the way a message travels (ARCHITECTURE.md). This class is the one entry point the
 * daemon, server, agents, benches and tests use; it builds the shared state and the parts, wires
 * them together and delegates to them. Each concern lives in its own file:
 *
 *   bus-context.ts  shared state (listeners, queues, registry, history, watchers, options)
 *   ingress.ts      a payload from outside enters: parse, unwrap, route, validate, thread
 *   publish.ts      wrap in an envelope from the runtime's state, record, publish; hop budget
 *   delivery.ts     transport -> parse, check, decode, validate -> the listener's queue
 *   handle.ts       run the handler under its timeout; route its output or fail the frame
 *   router.ts       respond / send / emit to peers, child frames, payload encoding
 *   failures.ts     `<huh>` and `<SystemError>` as messages
 *   tool-calls.ts   a tool call and its result as two messages through the ToolPort
 *   in-flight.ts    in-flight counts, idle threads, drain
 *   queries.ts      read-only views for the API
 *   control.ts      kill, pause, resume, hot reload
 *   lifecycle.ts    start, open and retire listeners, shutdown
 *
 * Every failure becomes a message (`<huh>` or `<SystemError>`) and the bus keeps running.
 */
import type {
  BusApi,
  BusQueries,
  BusStats,
  InjectRequest,
  InjectResult,
  ListenerInfo,
  ListenerState,
  MessagePage,
  MessageQuery,
  ThreadPage,
  ThreadQuery,
  ThreadStatus,
  ThreadView,
  ThreadWatcher,
} from './api.ts';
import { BusContext } from './bus-context.ts';
import type { BusOptions, ReconfigureResult } from './bus-types.ts';
import { Control } from './control.ts';
import { Deliverer } from './delivery.ts';
import { Failures } from './failures.ts';
import { Handler } from './handle.ts';
import type { ThreadHistory } from './history/index.ts';
import { createInFlight } from './in-flight.ts';
import { Ingress } from './ingress.ts';
import { Lifecycle } from './lifecycle.ts';
import type { ListenerSpec } from './listeners.ts';
import { Publisher } from './publish.ts';
import { Queries } from './queries.ts';
import { type RecoveryReport, recoverJournaled } from './recovery.ts';
import { Router } from './router.ts';
import { ToolCalls } from './tool-calls.ts';
import { MemoryTransport } from './transport/memory.ts';
import type { Transport } from './transport/types.ts';

export type { BusHooks, BusOptions, DeliveryOutcome, ReconfigureResult, ToolPort } from './bus-types.ts';

export class Bus implements BusApi, BusQueries {
  readonly history: ThreadHistory;
  readonly #ingress: Ingress;
  readonly #queries: Queries;
  readonly #control: Control;
  readonly #lifecycle: Lifecycle;
  readonly #recovery: () => RecoveryReport;

  constructor(specs: readonly ListenerSpec[], transport: Transport, options: BusOptions) {
    const bus = new BusContext(specs, transport, options);
    this.history = bus.history;
    // Built in dependency order; no part knows the Bus, and none is built twice.
    const inFlight = createInFlight(bus);
    const publisher = new Publisher(bus, inFlight);
    const failures = new Failures(bus, publisher, inFlight);
    const router = new Router(bus, publisher, failures);
    const handler = new Handler(bus, router, failures, new ToolCalls(bus), inFlight);
    this.#lifecycle = new Lifecycle(bus, new Deliverer(bus, failures, inFlight), handler, inFlight);
    this.#ingress = new Ingress(bus, publisher);
    this.#queries = new Queries(bus, inFlight);
    this.#control = new Control(bus, inFlight, this.#lifecycle);
    this.#recovery = () => recoverJournaled(bus, inFlight);
    // A journaled memory transport reads the registry for the frames each message needs after a restart.
    if (transport instanceof MemoryTransport) transport.bind(bus.threads);
    bus.store.attach(bus.threads, bus.history, {
      idle: (thread) => inFlight.threadIdle(thread),
      stopped: (thread) => bus.hooks.thread?.(thread, 'stopped'),
    });
  }

  /** Subscribes every listener on the transport and starts collecting idle threads. */
  start(): void {
    this.#lifecycle.start();
  }

  /**
   * Queues again the messages a journaled memory transport accepted and never handled before the
   * last stop (see recovery.ts). Call right after start(), before any new work is accepted.
   */
  recover(): RecoveryReport {
    return this.#recovery();
  }

  // ---- ingress ---------------------------------------------------------------------------------

  inject(request: InjectRequest): Promise<InjectResult> {
    return this.#ingress.inject(request);
  }

  // ---- queries (BusApi, BusQueries) ------------------------------------------------------------

  thread(id: string): ThreadView | undefined {
    return this.#queries.thread(id);
  }

  loadThread(id: string): Promise<void> {
    return this.#queries.loadThread(id);
  }

  watch(thread: string, watcher: ThreadWatcher): () => void {
    return this.#queries.watch(thread, watcher);
  }

  listThreads(query: ThreadQuery): ThreadPage {
    return this.#queries.listThreads(query);
  }

  listMessages(query: MessageQuery): MessagePage {
    return this.#queries.listMessages(query);
  }

  listeners(): ListenerInfo[] {
    return this.#queries.listeners();
  }

  describe(name: string): Promise<{ xsd: string; example: string; prompt: string } | undefined> {
    return this.#queries.describe(name);
  }

  decodeReply(listener: string, payload: string): { tag: string; payload: Record<string, unknown> } {
    return this.#queries.decodeReply(listener, payload);
  }

  threadIdsStartingWith(prefix: string, limit: number): string[] {
    return this.#queries.threadIdsStartingWith(prefix, limit);
  }

  /** In-flight work, threads and frames held, queue depth and running handlers per listener. */
  stats(): BusStats {
    return this.#queries.stats();
  }

  /** Queue state of one listener (API), or undefined when there is no such listener. */
  listenerState(name: string): ListenerState | undefined {
    return this.#queries.listenerState(name);
  }

  /** True while any listener's queue refuses new work; ingress may turn callers away early. */
  get saturated(): boolean {
    return this.#queries.saturated;
  }

  // ---- operator actions (control.ts) -----------------------------------------------------------

  /**
   * Stops a thread now: queued messages dropped, running handlers aborted, `<SystemError>` killed
   * recorded. Undefined when the thread is unknown; idempotent otherwise.
   */
  kill(
    id: string,
    by = 'api',
  ): { thread: string; status: ThreadStatus; dropped: number; aborted: number } | undefined {
    return this.#control.kill(id, by);
  }

  /** Holds a listener's queue: messages still queue (up to its length), none start. False if unknown. */
  pause(name: string): boolean {
    return this.#control.pause(name);
  }

  resume(name: string): boolean {
    return this.#control.resume(name);
  }

  /**
   * Stops taking `name`'s messages from the transport (what is queued still runs): with the Redis
   * transport the other daemons take all of its work. So until the bus stops (or a reload adds the
   * listener anew). False if it has no subscription.
   */
  stopReading(name: string): Promise<boolean> {
    return this.#lifecycle.stopReading(name);
  }

  /** Swaps the set of listeners without dropping in-flight messages; a throw leaves the bus as it was. */
  reconfigure(specs: readonly ListenerSpec[]): ReconfigureResult {
    return this.#control.reconfigure(specs);
  }

  // ---- shutdown (lifecycle.ts) -----------------------------------------------------------------

  /**
   * Stops accepting injections, lets in-flight messages finish for up to `drainMs` (default
   * bus.drain_timeout_ms), then aborts what is still running and closes the transport.
   */
  stop(drainMs?: number): Promise<{ drained: boolean; abandoned: number }> {
    return this.#lifecycle.stop(drainMs);
  }
}
