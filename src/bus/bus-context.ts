/**
 * The state the parts of the bus share: listeners and their tag index, queues and subscriptions,
 * thread registry, history, watchers, running handlers, options. One object, built once by the
 * Bus and handed to every part, so a part sees exactly what the others see and nothing is copied
 * per hop. Parts import this file (and bus-types.ts), never bus.ts.
 */
import type { Logger } from 'pino';
import { knownSecrets } from '../audit/redact.ts';
import { schemaDefault } from '../config/schema.ts';
import type { IncomingReply } from '../listener/types.ts';
import type { HopSpan, TraceScope, Tracing } from '../telemetry/types.ts';
import type { XmlLimits } from '../xml/limits.ts';
import type { ThreadWatcher } from './api.ts';
import type { BusHooks, BusOptions } from './bus-types.ts';
import { ThreadHistory } from './history/index.ts';
import { buildRuntimeListeners, type ListenerSpec, type RuntimeListener } from './listeners.ts';
import type { Message, MessageKind } from './message.ts';
import { RunningHandlers } from './running.ts';
import type { ListenerQueue } from './scheduler.ts';
import { LocalThreadStore, type ThreadStore } from './thread-store.ts';
import { type Frame, ThreadRegistry, type ThreadState } from './threads.ts';
import type { Subscription, Transport } from './transport/types.ts';

/** A message accepted into a listener's queue, with everything its handler run needs. */
export interface Delivery {
  /** The message; its `envelope` is '' once queued when nothing waits for the outcome (deliverDetached). */
  message: Message;
  thread: ThreadState;
  frame: Frame;
  target: RuntimeListener;
  /** Decoded own payload, or undefined when `reply` is set. */
  payload: Record<string, unknown> | undefined;
  reply: IncomingReply | undefined;
  done: () => void;
  /** The transport's "handler finished" signal (see Deliver): only the outputs' confirmation is left. */
  handled: (() => void) | undefined;
  /** Not handled (shutdown): a transport that can redeliver will, elsewhere or later. */
  abandon: (reason: unknown) => void;
  /** The hop's `deliver` span (tracing on), ended with the delivery's outcome. */
  span: HopSpan | undefined;
}

/** The delivered message whose outputs are being published, and how many it has published so far. */
export interface Origin {
  id: string;
  seq: number;
  /**
   * When set, publishing an output does not wait for the transport to confirm it: the promise goes
   * here, and the delivery is done (acknowledged) only once they have all settled.
   */
  confirmations?: Promise<void>[];
  /** The delivered message's span (tracing on): the outputs' envelopes carry its traceparent. */
  trace?: TraceScope | undefined;
}

export class BusContext {
  /** The listeners messages are routed to now (a reload swaps the contents, never the map). */
  readonly listeners: Map<string, RuntimeListener>;
  readonly byTag = new Map<string, RuntimeListener[]>();
  /** The specs the listeners were built from, to tell a replaced listener from an unchanged one. */
  readonly specs = new Map<string, ListenerSpec>();
  /**
   * Listeners removed by a reload that still have queued or running messages: they finish those
   * (delivery still finds them here), then their queue and subscription go.
   */
  readonly retiring = new Map<string, RuntimeListener>();
  readonly queues = new Map<string, ListenerQueue<Delivery>>();
  readonly subscriptions = new Map<string, Subscription>();
  readonly watchers = new Map<string, Set<ThreadWatcher>>();
  /** Handlers running now, so kill and shutdown can abort them. */
  readonly running = new RunningHandlers();
  readonly hooks: BusHooks;
  readonly tracing: Tracing | undefined;
  readonly threads: ThreadRegistry;
  readonly history: ThreadHistory;
  /** Where thread state lives: this daemon's memory (LocalThreadStore) or shared with other daemons. */
  readonly store: ThreadStore;
  readonly xmlLimits: XmlLimits;
  readonly logger: Logger;
  stopping = false;
  started = false;

  constructor(
    specs: readonly ListenerSpec[],
    readonly transport: Transport,
    readonly options: BusOptions,
  ) {
    this.logger = options.logger;
    this.hooks = options.hooks ?? {};
    this.tracing = options.tracing;
    this.listeners = buildRuntimeListeners(specs, options.limits, options.bus);
    for (const spec of specs) this.specs.set(spec.config.name, spec);
    this.indexTags();
    const { limits } = options;
    this.xmlLimits = {
      maxBytes: limits.max_message_bytes,
      maxDepth: limits.max_xml_depth,
      maxAttributes: limits.max_attributes,
      maxTextLength: limits.max_text_length,
      maxElements: limits.max_xml_elements,
    };
    this.store = options.threadStore ?? new LocalThreadStore();
    this.threads = new ThreadRegistry({
      maxHops: limits.max_thread_hops,
      maxDepth: limits.max_call_depth,
      idleMs: limits.thread_idle_ms,
      // Only a shared store follows the registry's changes; without one they cost nothing.
      observer: this.store.shared ? this.store : undefined,
    });
    this.history =
      options.history ??
      new ThreadHistory({
        maxPerThread: limits.max_history_per_thread,
        maxThreads: options.historyMaxThreads ?? schemaDefault<number>('history.max_threads'),
      });
  }

  /** Rebuilds the tag -> listeners index after `listeners` changed. */
  indexTags(): void {
    this.byTag.clear();
    for (const listener of this.listeners.values()) {
      const list = this.byTag.get(listener.tag) ?? [];
      list.push(listener);
      this.byTag.set(listener.tag, list);
    }
  }

  /**
   * Appends to the thread's history, with every secret the daemon knows redacted (invariant 7):
   * the history is what the API, the stream, the files on disk and a resuming agent read. The
   * message delivered is not changed. With no known secrets this costs one size check.
   */
  record(
    thread: string,
    id: string,
    from: string,
    to: string,
    kind: MessageKind,
    payload: string,
    time = Date.now(),
  ): void {
    this.history.append(thread, { id, from, to, kind, payload: knownSecrets.redact(payload), time });
  }
}
