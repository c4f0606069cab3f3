/**
 * The bus: the way a message travels (ARCHITECTURE.md). Ingress and handler output are parsed,
 * routed and permitted here, wrapped in an envelope whose `<from>` and `<thread>` come from the
 * runtime's own state, published on the transport, and on delivery parsed, decoded, validated,
 * scheduled and handled. Every failure becomes a message (`<huh>` or `<SystemError>`) and the bus
 * keeps running.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  BusyError,
  OrganismError,
  RoutingError,
  ShuttingDownError,
  ThreadNotFoundError,
  XmlError,
} from '../errors.ts';
import type { HandlerResult, IncomingReply, Outgoing } from '../listener/types.ts';
import type { ToolResult } from '../tools/types.ts';
import { decodePayload, encodePayload } from '../xml/codec.ts';
import { schemaToExample, schemaToPrompt, schemaToXsd } from '../xml/describe.ts';
import { buildEnvelope, parseEnvelope } from '../xml/envelope.ts';
import type { XmlLimits } from '../xml/limits.ts';
import { parsePayload } from '../xml/parse.ts';
import { repairPayloads } from '../xml/repair.ts';
import type {
  BusApi,
  BusQueries,
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
import type { BusHooks, BusOptions, DeliveryOutcome, ReconfigureResult } from './bus-types.ts';
import { DeliveryContext } from './context.ts';
import { ThreadHistory, toView } from './history/index.ts';
import { nextId } from './ids.ts';
import { buildRuntimeListeners, type ListenerSpec, type RuntimeListener } from './listeners.ts';
import type { Message, MessageKind } from './message.ts';
import { listMessages, listThreads } from './queries.ts';
import { ListenerQueue } from './scheduler.ts';
import { type HuhReason, huhXml, SYSTEM_SENDER, type SystemErrorCode, systemErrorXml } from './system.ts';
import type { ThreadStore } from './thread-store.ts';
import { type Frame, ThreadRegistry, type ThreadState } from './threads.ts';
import type { Subscription, Transport } from './transport.ts';
import { unwrapEnvelope } from './unwrap.ts';

export type { BusHooks, BusOptions, DeliveryOutcome, ReconfigureResult, ToolPort } from './bus-types.ts';

interface Delivery {
  message: Message;
  thread: ThreadState;
  frame: Frame;
  target: RuntimeListener;
  /** Decoded own payload, or undefined when `reply` is set. */
  payload: Record<string, unknown> | undefined;
  reply: IncomingReply | undefined;
  done: () => void;
  /** Not handled (shutdown): a transport that can redeliver will, elsewhere or later. */
  abandon: (reason: unknown) => void;
}

/** The delivered message whose outputs are being published, and how many it has published so far. */
interface Origin {
  id: string;
  seq: number;
}

const INGRESS_DEFAULT = 'api';

export class Bus implements BusApi, BusQueries {
  private readonly listenersByName: Map<string, RuntimeListener>;
  private readonly byTag = new Map<string, RuntimeListener[]>();
  private readonly queues = new Map<string, ListenerQueue<Delivery>>();
  private readonly subscriptions = new Map<string, Subscription>();
  /** The specs the listeners were built from, to tell a replaced listener from an unchanged one. */
  private readonly specs = new Map<string, ListenerSpec>();
  /**
   * Listeners removed by a reload that still have queued or running messages: they finish those
   * (deliver() still finds them here), then their queue and subscription go (retire()).
   */
  private readonly retiring = new Map<string, RuntimeListener>();
  private readonly hooks: BusHooks;
  private readonly threads: ThreadRegistry;
  private readonly store: ThreadStore | undefined;
  readonly history: ThreadHistory;
  private readonly xmlLimits: XmlLimits;
  private readonly watchers = new Map<string, Set<ThreadWatcher>>();
  /** Handlers running now, so shutdown can abort them. */
  private readonly running = new Set<DeliveryContext>();
  private readonly logger: Logger;
  private sweeper: NodeJS.Timeout | undefined;
  private stopping = false;
  private started = false;
  private totalInFlight = 0;
  private drainWaiters: Array<() => void> = [];

  constructor(
    specs: readonly ListenerSpec[],
    private readonly transport: Transport,
    private readonly options: BusOptions,
  ) {
    this.logger = options.logger;
    this.hooks = options.hooks ?? {};
    this.listenersByName = buildRuntimeListeners(specs, options.limits, options.bus);
    for (const spec of specs) this.specs.set(spec.config.name, spec);
    this.indexTags();
    const { limits } = options;
    this.xmlLimits = {
      maxBytes: limits.max_message_bytes,
      maxDepth: limits.max_xml_depth,
      maxAttributes: limits.max_attributes,
      maxTextLength: limits.max_text_length,
    };
    this.store = options.threadStore;
    this.threads = new ThreadRegistry({
      maxHops: limits.max_thread_hops,
      maxDepth: limits.max_call_depth,
      idleMs: limits.thread_idle_ms,
      observer: options.threadStore,
    });
    this.history =
      options.history ??
      new ThreadHistory({
        maxPerThread: limits.max_history_per_thread,
        maxThreads: options.historyMaxThreads ?? 10_000,
      });
    this.history.subscribe((thread, entry) => {
      const set = this.watchers.get(thread);
      if (!set) return;
      const view = toView(entry);
      for (const w of set) w.onMessage(view);
    });
    this.store?.attach(this.threads, this.history, {
      idle: (thread) => this.threadIdle(thread),
      stopped: (thread) => this.hooks.thread?.(thread, 'stopped'),
    });
  }

  /** Subscribes every listener on the transport and starts collecting idle threads. */
  start(): void {
    this.started = true;
    for (const listener of this.listenersByName.values()) this.open(listener);
    const every = Math.max(1_000, Math.min(this.options.limits.thread_idle_ms, 60_000));
    this.sweeper = setInterval(() => this.threads.collectIdle(), every);
    this.sweeper.unref();
  }

  // ---- ingress ---------------------------------------------------------------------------------

  async inject(request: InjectRequest): Promise<InjectResult> {
    if (this.stopping) throw new ShuttingDownError();
    const from = request.from ?? INGRESS_DEFAULT;
    if (this.listenersByName.has(from) || from === SYSTEM_SENDER) {
      throw new OrganismError(
        'ingress.from',
        `'${from}' is reserved and cannot be used as the sender of an injection`,
      );
    }
    let parsed = parsePayload(request.payload, this.xmlLimits);
    let to = request.to;
    const unwrapped = unwrapEnvelope(parsed.xml, parsed.tag, parsed.node.ns, this.xmlLimits);
    if (unwrapped) {
      parsed = parsePayload(unwrapped.payloadXml, this.xmlLimits);
      to ??= unwrapped.to;
    }
    const targets = this.ingressTargets(parsed.tag, to);
    for (const target of targets) {
      const error = target.validate(decodePayload(parsed.node, target.schema));
      if (error) throw error;
      if (this.queues.get(target.name)?.full) throw new BusyError(target.name);
    }
    let thread: ThreadState;
    if (request.thread) {
      // Another daemon may have started it.
      if (this.store) await this.store.load(request.thread);
      const existing = this.threads.thread(request.thread);
      if (!existing) throw new ThreadNotFoundError(request.thread);
      if (existing.stopped)
        throw new OrganismError('thread.stopped', `thread ${existing.id} has been stopped`);
      thread = existing;
    } else {
      thread = this.threads.createThread(request.scope);
      this.history.begin(thread.id, thread.created);
      this.hooks.thread?.(thread.id, 'started');
    }
    let firstId = '';
    for (const target of targets) {
      const frame = this.threads.openFrame(thread, target.name, from, null);
      const id = await this.publish(thread, frame, 'message', from, target.name, parsed.tag, parsed.xml);
      firstId ||= id ?? '';
    }
    return { thread: thread.id, message: firstId };
  }

  private ingressTargets(tag: string, to: string | undefined): RuntimeListener[] {
    if (to !== undefined) {
      const target = this.listenersByName.get(to);
      if (!target) throw new RoutingError(`no listener named '${to}'`);
      if (target.tag !== tag) {
        throw new RoutingError(`listener '${to}' accepts <${target.tag}>, not <${tag}>`);
      }
      return [target];
    }
    const targets = this.byTag.get(tag);
    if (!targets || targets.length === 0) throw new RoutingError(`no listener accepts <${tag}>`);
    return targets;
  }

  // ---- publish (wrap) --------------------------------------------------------------------------

  /**
   * Wraps a payload in an envelope from the runtime's own state, records it in the thread history
   * and publishes it. Returns the message id, or undefined when a budget stopped it.
   */
  private async publish(
    thread: ThreadState,
    frame: Frame | null,
    kind: MessageKind,
    from: string,
    to: string,
    tag: string,
    payloadXml: string,
    depth = frame?.depth ?? 0,
    origin?: Origin,
  ): Promise<string | undefined> {
    const budget = this.threads.chargeHop(thread, depth);
    if (!budget.ok) {
      this.overBudget(thread, from, budget.what, budget.limit);
      return undefined;
    }
    const message: Message = {
      // Shared (redeliverable) transport: a handler run again after a crash gives its outputs the
      // same ids, so the effects they cause downstream stay once (tool call ids derive from them).
      id: origin && this.store ? derivedId(origin) : nextId(),
      thread: thread.id,
      frame: frame?.id ?? '',
      from,
      to,
      tag,
      envelope: buildEnvelope({ from, to, thread: thread.id }, payloadXml),
      kind,
      hop: thread.hops,
      time: Date.now(),
    };
    this.record(thread.id, message.id, from, to, kind, payloadXml, message.time);
    // No frame (a reply nobody can receive) or an ingress target: recorded, nothing to deliver.
    if (!frame || !this.listenersByName.has(to)) return message.id;
    thread.inFlight++;
    // Shared state: counted in Redis, since another daemon may settle it; locally only what runs here.
    if (this.store) this.store.published(thread.id);
    else this.totalInFlight++;
    try {
      await this.transport.publish(message);
    } catch (error) {
      this.logger.error({ err: error, thread: thread.id, to }, 'transport refused a message');
      this.settle(thread);
    }
    return message.id;
  }

  private record(
    thread: string,
    id: string,
    from: string,
    to: string,
    kind: MessageKind,
    payload: string,
    time = Date.now(),
  ): void {
    this.history.append(thread, { id, from, to, kind, payload, time });
  }

  /** A budget ran out: the sender is told in the history; a hop budget also stops the thread. */
  private overBudget(thread: ThreadState, from: string, what: 'hops' | 'depth', limit: number): void {
    const xml = systemErrorXml('budget', `(${what} limit ${limit})`);
    this.record(thread.id, nextId(), SYSTEM_SENDER, from, 'system-error', xml);
    if (what === 'hops' && !thread.stopped) {
      thread.stopped = true;
      this.history.markStopped(thread.id);
      this.hooks.thread?.(thread.id, 'stopped');
    }
    this.logger.warn({ thread: thread.id, listener: from, what, limit }, 'thread budget exhausted');
  }

  // ---- delivery --------------------------------------------------------------------------------

  private deliver(message: Message): Promise<void> {
    if (!this.store) return this.deliverNow(message);
    // Shared state: the thread and frame may be another daemon's; load them first. A failed load
    // rejects, which leaves the message to the transport to redeliver.
    this.totalInFlight++;
    return this.store
      .load(message.thread, message.frame)
      .then(() => this.deliverNow(message))
      .finally(() => {
        this.totalInFlight--;
        this.resolveDrain();
      });
  }

  private deliverNow(message: Message): Promise<void> {
    const thread = this.threads.thread(message.thread);
    // A listener removed by a reload still takes what was published to it before (retiring).
    const target = this.listenersByName.get(message.to) ?? this.retiring.get(message.to);
    const frame = this.threads.frame(message.frame);
    if (!thread || !target || !frame || thread.stopped) {
      // The frame was pruned (its caller already got an answer) or the thread stopped: nothing to do.
      if (target) this.hooks.delivered?.(target.name, 'dropped', Date.now() - message.time, message.thread);
      this.settle(thread);
      return Promise.resolve();
    }
    let payload: Record<string, unknown> | undefined;
    let reply: IncomingReply | undefined;
    try {
      const envelope = parseEnvelope(message.envelope, this.xmlLimits);
      if (
        envelope.thread !== message.thread ||
        envelope.from !== message.from ||
        envelope.tag !== message.tag
      ) {
        throw new OrganismError('envelope.mismatch', 'envelope does not match its routing record');
      }
      if (message.kind === 'message') {
        payload = decodePayload(envelope.node, target.schema);
        const invalid = target.validate(payload);
        if (invalid) {
          this.hooks.delivered?.(target.name, 'invalid', Date.now() - message.time, thread.id);
          this.huhToSender(thread, frame, message, 'validate', envelope.payloadXml, invalid.message, {
            id: message.id,
            seq: 0,
          });
          return Promise.resolve();
        }
      } else {
        const known = this.byTag.get(message.tag)?.[0] ?? this.responseSchemaOwner(message.tag);
        reply = {
          tag: message.tag,
          kind:
            message.kind === 'huh' ? 'huh' : message.kind === 'system-error' ? 'system-error' : 'response',
          payload: decodePayload(envelope.node, known?.schema ?? {}),
          xml: envelope.payloadXml,
        };
      }
    } catch (error) {
      this.logger.warn({ err: error, thread: thread.id, to: message.to }, 'delivery refused a message');
      this.hooks.delivered?.(target.name, 'invalid', Date.now() - message.time, thread.id);
      this.huhToSender(thread, frame, message, 'parse', message.envelope, undefined, {
        id: message.id,
        seq: 0,
      });
      return Promise.resolve();
    }
    const queue = this.queues.get(target.name)!;
    return new Promise<void>((resolve, reject) => {
      const delivery: Delivery = {
        message,
        thread,
        frame,
        target,
        payload,
        reply,
        done: resolve,
        abandon: reject,
      };
      if (!queue.offer(thread.id, delivery)) {
        this.hooks.delivered?.(target.name, 'busy', Date.now() - message.time, thread.id);
        this.failFrame(thread, frame, message.kind, 'busy', { id: message.id, seq: 0 });
        this.settle(thread);
        resolve();
      }
    });
  }

  /** The schema a reply tag was declared with, by the listener whose `response` it is. */
  private responseSchemaOwner(tag: string): { schema: Record<string, unknown> } | undefined {
    for (const listener of this.listenersByName.values()) {
      if (listener.response?.tag === tag) return { schema: listener.response.schema };
    }
    return undefined;
  }

  // ---- handle ----------------------------------------------------------------------------------

  private async handle(delivery: Delivery): Promise<void> {
    const { message, thread, frame, target } = delivery;
    // Call ids from the message id and the call's place in this run: a redelivered message that
    // runs its handler again makes the same calls with the same ids (side effects act once).
    let calls = 0;
    const ctx = new DeliveryContext(target, thread.id, message.from, message.tag, this.logger, (name, args) =>
      this.callTool(target, thread, frame, name, args, `${message.id}.call-${++calls}`),
    );
    this.running.add(ctx);
    let timer: NodeJS.Timeout | undefined;
    let outcome: DeliveryOutcome = 'ok';
    try {
      const result = await new Promise<HandlerResult>((resolve, reject) => {
        timer = setTimeout(() => reject(TIMED_OUT), target.timeoutMs);
        invokeHandler(target, delivery, ctx).then(resolve, reject);
      });
      if (!thread.stopped) await this.route(delivery, result);
    } catch (error) {
      const timedOut = error === TIMED_OUT;
      outcome = timedOut ? 'timeout' : 'error';
      ctx.abort(timedOut ? new Error('handler timed out') : error);
      this.logger.warn(
        { err: timedOut ? undefined : error, thread: thread.id, listener: target.name },
        timedOut ? `handler timed out after ${target.timeoutMs} ms` : 'handler threw',
      );
      if (!thread.stopped)
        this.failFrame(thread, frame, message.kind, timedOut ? 'timeout' : 'handler', {
          id: message.id,
          seq: 0,
        });
    } finally {
      clearTimeout(timer);
      this.running.delete(ctx);
      // Nothing can be delivered into the frame of a listener without onReply once it is handled.
      if (!target.onReply) this.threads.pruneFrame(frame);
      this.hooks.delivered?.(target.name, outcome, Date.now() - message.time, thread.id);
      this.settle(thread);
      delivery.done();
    }
  }

  // ---- route handler output --------------------------------------------------------------------

  private async route(delivery: Delivery, result: HandlerResult): Promise<void> {
    const outgoing = normalizeResult(result);
    if (outgoing.length === 0) return;
    const { thread, frame, target: source, message } = delivery;
    const origin: Origin = { id: message.id, seq: 0 };
    // Output produced while handling an error report is not answered with another report: that
    // could loop forever between a confused handler and the runtime.
    const quiet = message.kind === 'huh' || message.kind === 'system-error';
    // Responses go last: they prune this frame, and sends opened under it must exist first.
    const ordered = [
      ...outgoing.filter((o) => o.kind !== 'respond'),
      ...outgoing.filter((o) => o.kind === 'respond'),
    ];
    let responded = false;
    for (const out of ordered) {
      if (thread.stopped) return;
      try {
        if (out.kind === 'send')
          await this.routeSend(thread, frame, source, out.to, out.payload, quiet, origin);
        else if (out.kind === 'emit')
          await this.routeByTag(thread, frame, source, out.payload, quiet, origin);
        else {
          await this.routeRespond(thread, frame, source, out.payload, origin);
          responded = true;
        }
      } catch (error) {
        const attempt = typeof out.payload === 'string' ? out.payload : safeJson(out.payload);
        const reason: HuhReason = error instanceof XmlError ? 'parse' : 'validate';
        this.logger.warn({ err: error, thread: thread.id, listener: source.name }, 'handler output refused');
        if (!quiet)
          this.huhToSelf(
            thread,
            frame,
            source,
            reason,
            attempt,
            error instanceof OrganismError ? error.message : undefined,
            origin,
          );
      }
    }
    if (responded) this.threads.pruneFrame(frame);
  }

  private async routeSend(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    to: string,
    payload: Outgoing['payload'],
    quiet: boolean,
    origin?: Origin,
  ): Promise<void> {
    const target = this.listenersByName.get(to);
    if (!target || !source.peers.has(to)) {
      if (!quiet) this.routingError(thread, frame, source, origin);
      return;
    }
    for (const xml of this.payloadXmls(payload, target.tag, target.schema)) {
      const child = this.openChildFrame(thread, target, source, frame);
      await this.publish(
        thread,
        child,
        'message',
        source.name,
        target.name,
        rootTag(xml),
        xml,
        undefined,
        origin,
      );
    }
  }

  private async routeByTag(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    text: string,
    quiet: boolean,
    origin?: Origin,
  ): Promise<void> {
    for (let xml of repairPayloads(text, this.xmlLimits)) {
      const unwrapped = unwrapEnvelope(xml, rootTag(xml), undefined, this.xmlLimits);
      if (unwrapped?.to) {
        await this.routeSend(thread, frame, source, unwrapped.to, unwrapped.payloadXml, quiet, origin);
        continue;
      }
      if (unwrapped) xml = unwrapped.payloadXml;
      const tag = rootTag(xml);
      const targets = (this.byTag.get(tag) ?? []).filter((t) => source.peers.has(t.name));
      if (targets.length === 0) {
        if (!quiet) this.huhToSelf(thread, frame, source, 'route', xml, undefined, origin);
        continue;
      }
      for (const target of targets) {
        const child = this.openChildFrame(thread, target, source, frame);
        await this.publish(thread, child, 'message', source.name, target.name, tag, xml, undefined, origin);
      }
    }
  }

  private async routeRespond(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    payload: Outgoing['payload'],
    origin?: Origin,
  ): Promise<void> {
    if (typeof payload !== 'string' && !source.response) {
      throw new OrganismError(
        'respond.no_response_spec',
        `${source.name} responded with an object but declares no response { tag, schema }; respond with XML text or declare one`,
      );
    }
    const parent = frame.parent ? this.threads.frame(frame.parent) : null;
    if (parent === undefined) return; // the caller's frame is gone: nobody is waiting any more
    for (const xml of this.payloadXmls(payload, source.response?.tag ?? '', source.response?.schema ?? {})) {
      // parent null: the caller is an ingress or cannot receive replies; the reply is recorded only.
      await this.publish(
        thread,
        parent,
        'response',
        source.name,
        frame.caller,
        rootTag(xml),
        xml,
        frame.depth,
        origin,
      );
    }
  }

  /**
   * A send opens a frame below the sender's. It links back only if the sender has onReply: a reply
   * to a listener that cannot receive one is recorded and goes no further, so nothing needs the
   * sender's frame once its handler is done (see handle()).
   */
  private openChildFrame(
    thread: ThreadState,
    target: RuntimeListener,
    source: RuntimeListener,
    frame: Frame,
  ): Frame {
    return this.threads.openFrame(
      thread,
      target.name,
      source.name,
      source.onReply ? frame : null,
      frame.depth + 1,
    );
  }

  /** Handler payload (object or XML text) to clean payload XML strings. */
  private payloadXmls(payload: Outgoing['payload'], tag: string, schema: Record<string, unknown>): string[] {
    if (typeof payload === 'string') return repairPayloads(payload, this.xmlLimits);
    return [encodePayload(tag, payload, schema)];
  }

  // ---- failures as messages --------------------------------------------------------------------

  /** `<huh>` to whoever sent `message`, in the frame the sender handles messages in. */
  private huhToSender(
    thread: ThreadState,
    frame: Frame,
    message: Message,
    reason: HuhReason,
    attempt: string,
    detail?: string,
    origin?: Origin,
  ): void {
    const xml = huhXml(reason, attempt, detail);
    const senderFrame =
      message.kind === 'message' ? (frame.parent ? this.threads.frame(frame.parent) : null) : frame;
    if (message.kind === 'message') this.threads.pruneFrame(frame);
    void this.sendSystem(thread, senderFrame ?? null, message.from, 'huh', xml, origin);
    this.settle(thread);
  }

  private huhToSelf(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    reason: HuhReason,
    attempt: string,
    detail?: string,
    origin?: Origin,
  ): void {
    void this.sendSystem(thread, frame, source.name, 'huh', huhXml(reason, attempt, detail), origin);
  }

  private routingError(thread: ThreadState, frame: Frame, source: RuntimeListener, origin?: Origin): void {
    void this.sendSystem(thread, frame, source.name, 'system-error', systemErrorXml('routing'), origin);
  }

  /**
   * The work in `frame` failed: its caller gets a `<SystemError>` in the caller's own frame, and
   * the frame ends. When the failing delivery was itself a reply, the listener handling it failed
   * its own task, which is what its caller learns.
   */
  private failFrame(
    thread: ThreadState,
    frame: Frame,
    _kind: MessageKind,
    code: SystemErrorCode,
    origin?: Origin,
  ): void {
    const parent = frame.parent ? (this.threads.frame(frame.parent) ?? null) : null;
    this.threads.pruneFrame(frame);
    void this.sendSystem(thread, parent, frame.caller, 'system-error', systemErrorXml(code), origin);
  }

  /** A runtime-originated message to `to` in `frame` (null: `to` is an ingress; record only). */
  private async sendSystem(
    thread: ThreadState,
    frame: Frame | null,
    to: string,
    kind: 'huh' | 'system-error',
    xml: string,
    origin?: Origin,
  ): Promise<void> {
    await this.publish(thread, frame, kind, SYSTEM_SENDER, to, rootTag(xml), xml, undefined, origin);
  }

  // ---- tools -----------------------------------------------------------------------------------

  /** A tool call is two messages in the thread: the call and the result, both counted as hops. */
  private async callTool(
    caller: RuntimeListener,
    thread: ThreadState,
    frame: Frame,
    tool: string,
    args: unknown,
    givenId?: string,
  ): Promise<ToolResult> {
    const callId = givenId ?? randomUUID();
    const refuse = (code: string, message: string): ToolResult => ({
      status: 'refused',
      tool,
      error: { code, message },
    });
    const budget = this.threads.chargeHop(thread, frame.depth);
    if (!budget.ok) return refuse('budget', `thread ${budget.what} budget of ${budget.limit} exhausted`);
    this.record(thread.id, callId, caller.name, tool, 'tool-call', toolCallXml(tool, args));
    const result = this.options.tools
      ? await this.options.tools.call({
          tool,
          args,
          listener: caller.name,
          thread: thread.id,
          scope: thread.scope,
          callId,
        })
      : refuse('ToolsUnavailable', 'this organism has no tool runtime');
    this.threads.chargeHop(thread, frame.depth);
    this.record(thread.id, nextId(), tool, caller.name, 'tool-result', toolResultXml(result));
    return result;
  }

  // ---- bookkeeping -----------------------------------------------------------------------------

  /** One delivered message is finished with (handled, refused or dropped). Exactly once per delivery. */
  private settle(thread: ThreadState | undefined): void {
    if (this.store) {
      this.settleShared(thread);
      return;
    }
    this.totalInFlight = Math.max(0, this.totalInFlight - 1);
    if (thread) {
      thread.inFlight = Math.max(0, thread.inFlight - 1);
      thread.lastActive = Date.now();
    }
    if (thread && thread.inFlight === 0) this.threadIdle(thread.id);
    this.resolveDrain();
  }

  /** Shared state: the count across daemons decides idleness (the Redis reply says what is left). */
  private settleShared(thread: ThreadState | undefined): void {
    if (!thread) return;
    thread.lastActive = Date.now();
    thread.inFlight = Math.max(0, thread.inFlight - 1);
    this.store!.settled(thread.id).then(
      (left) => {
        thread.inFlight = left;
        if (left === 0) this.threadIdle(thread.id);
      },
      (error: unknown) =>
        this.logger.error({ err: error, thread: thread.id }, 'shared thread state: settle failed'),
    );
  }

  /** Nothing of the thread is in flight (here, or with shared state on any daemon). */
  private threadIdle(thread: string): void {
    const set = this.watchers.get(thread);
    if (set) for (const w of set) w.onIdle?.();
    this.hooks.thread?.(thread, 'idle');
  }

  private resolveDrain(): void {
    if (this.totalInFlight === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  // ---- queries (BusApi) ------------------------------------------------------------------------

  thread(id: string): ThreadView | undefined {
    const record = this.history.messages(id);
    if (!record) return undefined;
    return {
      thread: id,
      status: this.threadStatus(id, record.stopped),
      created: new Date(record.created).toISOString(),
      messages: record.messages,
    };
  }

  async loadThread(id: string): Promise<void> {
    await this.store?.load(id);
  }

  watch(thread: string, watcher: ThreadWatcher): () => void {
    let set = this.watchers.get(thread);
    if (!set) {
      set = new Set();
      this.watchers.set(thread, set);
    }
    set.add(watcher);
    return () => {
      set.delete(watcher);
      if (set.size === 0) this.watchers.delete(thread);
    };
  }

  /** Registry status while the thread is live; after collection (or a restart) what history says. */
  private threadStatus(id: string, stoppedInHistory: boolean): ThreadStatus {
    const state = this.threads.thread(id);
    if (state) return this.threads.status(state);
    return stoppedInHistory ? 'stopped' : 'idle';
  }

  listThreads(query: ThreadQuery): ThreadPage {
    return listThreads(this.history, query, (id, stopped) => this.threadStatus(id, stopped));
  }

  listMessages(query: MessageQuery): MessagePage {
    return listMessages(this.history, query);
  }

  listeners(): ListenerInfo[] {
    return [...this.listenersByName.values()].map((l) => ({
      name: l.name,
      description: l.description,
      tag: l.tag,
      agent: l.agent,
      peers: l.peerList,
      broadcast: l.broadcast,
      tools: l.tools,
    }));
  }

  describe(name: string): { xsd: string; example: string; prompt: string } | undefined {
    const l = this.listenersByName.get(name);
    if (!l) return undefined;
    const spec = { tag: l.tag, schema: l.schema };
    return {
      xsd: schemaToXsd(spec),
      example: schemaToExample(spec),
      prompt: schemaToPrompt(spec, l.name, l.description),
    };
  }

  /** Queue depth and running handlers per listener, for health and metrics. */
  stats(): { inFlight: number; threads: number; queues: Record<string, { depth: number; active: number }> } {
    const queues: Record<string, { depth: number; active: number }> = {};
    for (const [name, q] of this.queues) queues[name] = { depth: q.depth, active: q.active };
    return { inFlight: this.totalInFlight, threads: this.threads.size.threads, queues };
  }

  /** Queue state of one listener (API), or undefined when there is no such listener. */
  listenerState(name: string): ListenerState | undefined {
    const listener = this.listenersByName.get(name);
    const queue = this.queues.get(name);
    if (!listener || !queue) return undefined;
    return {
      paused: queue.isPaused,
      depth: queue.depth,
      active: queue.active,
      capacity: listener.queueLength,
    };
  }

  /** True while any listener's queue refuses new work; ingress may turn callers away early. */
  get saturated(): boolean {
    for (const [name, queue] of this.queues) if (queue.full && this.listenersByName.has(name)) return true;
    return false;
  }

  // ---- operator actions ------------------------------------------------------------------------

  /**
   * Stops a thread now: it accepts no more messages, its queued messages are dropped, running
   * handlers in it see their signal abort (their output is discarded), and the history records a
   * `<SystemError><code>killed</code>`. Undefined when the thread is unknown; idempotent otherwise.
   */
  kill(
    id: string,
    by = 'api',
  ): { thread: string; status: ThreadStatus; dropped: number; aborted: number } | undefined {
    const state = this.threads.thread(id);
    if (!state) {
      if (!this.history.has(id)) return undefined;
      // Collected or from before a restart: nothing runs in it; it is marked so no one thinks otherwise.
      this.history.markStopped(id);
      return { thread: id, status: 'stopped', dropped: 0, aborted: 0 };
    }
    if (state.stopped) return { thread: id, status: 'stopped', dropped: 0, aborted: 0 };
    state.stopped = true;
    let dropped = 0;
    for (const [name, queue] of this.queues) {
      for (const delivery of queue.removeThread(id)) {
        dropped++;
        this.hooks.delivered?.(name, 'dropped', Date.now() - delivery.message.time, id);
        this.settle(state);
        delivery.done();
      }
    }
    let aborted = 0;
    for (const ctx of this.running) {
      if (ctx.thread !== id) continue;
      aborted++;
      ctx.abort(new OrganismError('thread.killed', `thread ${id} was stopped by an operator`));
    }
    this.record(id, nextId(), SYSTEM_SENDER, by, 'system-error', systemErrorXml('killed'));
    this.history.markStopped(id);
    this.hooks.thread?.(id, 'stopped');
    this.logger.info({ thread: id, by, dropped, aborted }, 'thread killed');
    return { thread: id, status: 'stopped', dropped, aborted };
  }

  /** Holds a listener's queue: messages still queue (up to its length), none start. False if unknown. */
  pause(name: string): boolean {
    const queue = this.listenersByName.has(name) ? this.queues.get(name) : undefined;
    queue?.pause();
    return queue !== undefined;
  }

  resume(name: string): boolean {
    const queue = this.listenersByName.has(name) ? this.queues.get(name) : undefined;
    queue?.resume();
    return queue !== undefined;
  }

  // ---- hot reload ------------------------------------------------------------------------------

  /**
   * Swaps the set of listeners for `specs` without dropping in-flight messages. Everything that can
   * fail (schema compilation) happens before anything changes, so a throw leaves the bus as it was.
   * - added: a queue and a transport subscription are opened;
   * - replaced: the new version takes every message from now on; messages already queued run with
   *   the version that accepted them; the queue (and a pause) stays, with the new length/concurrency;
   * - removed: no longer routed to; it finishes what is queued for it, then its queue and
   *   subscription close. Replies that reach it later are recorded in the thread only.
   */
  reconfigure(specs: readonly ListenerSpec[]): ReconfigureResult {
    const next = buildRuntimeListeners(specs, this.options.limits, this.options.bus);
    const result: ReconfigureResult = { added: [], removed: [], replaced: [], unchanged: [] };
    for (const spec of specs) {
      const name = spec.config.name;
      const before = this.specs.get(name);
      if (!before) result.added.push(name);
      else if (sameSpec(before, spec)) result.unchanged.push(name);
      else result.replaced.push(name);
    }
    for (const name of this.listenersByName.keys()) if (!next.has(name)) result.removed.push(name);

    for (const name of result.removed) {
      this.retiring.set(name, this.listenersByName.get(name)!);
      this.specs.delete(name);
      const queue = this.queues.get(name);
      queue?.resume(); // a paused listener that is removed still finishes what it holds
      void queue?.idle().then(() => this.retire(name));
    }
    this.listenersByName.clear();
    for (const [name, listener] of next) this.listenersByName.set(name, listener);
    this.indexTags();
    for (const spec of specs) this.specs.set(spec.config.name, spec);
    for (const listener of next.values()) {
      const queue = this.queues.get(listener.name);
      // Removed earlier and still finishing its work: it comes back on the same queue.
      this.retiring.delete(listener.name);
      if (queue) queue.configure({ capacity: listener.queueLength, maxConcurrent: listener.maxConcurrent });
      else if (this.started) this.open(listener);
    }
    return result;
  }

  /** A queue and a transport subscription for one listener. */
  private open(listener: RuntimeListener): void {
    const queue = new ListenerQueue<Delivery>(
      { capacity: listener.queueLength, maxConcurrent: listener.maxConcurrent },
      (delivery) => this.handle(delivery),
    );
    this.queues.set(listener.name, queue);
    this.subscriptions.set(
      listener.name,
      // A transport that fetches work (Redis) takes no more than the queue can hold, and leaves
      // the rest to other daemons: twice the concurrency keeps the handlers busy between reads.
      this.transport.subscribe(listener.name, (message) => this.deliver(message), {
        maxInFlight: Math.min(listener.queueLength, listener.maxConcurrent * 2),
      }),
    );
  }

  /** A removed listener has finished its queued work: its queue and subscription go. */
  private retire(name: string): void {
    if (!this.retiring.has(name) || this.stopping) return;
    this.retiring.delete(name);
    this.queues.delete(name);
    const subscription = this.subscriptions.get(name);
    this.subscriptions.delete(name);
    void subscription?.unsubscribe();
  }

  private indexTags(): void {
    this.byTag.clear();
    for (const listener of this.listenersByName.values()) {
      const list = this.byTag.get(listener.tag) ?? [];
      list.push(listener);
      this.byTag.set(listener.tag, list);
    }
  }

  // ---- shutdown --------------------------------------------------------------------------------

  /**
   * Stops accepting injections, lets in-flight messages finish for up to `drainMs`, then aborts
   * what is still running and closes the transport. Resolves with how many messages were cut off.
   */
  async stop(drainMs = this.options.bus.drain_timeout_ms): Promise<{ drained: boolean; abandoned: number }> {
    if (this.stopping) return { drained: true, abandoned: 0 };
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    // A paused listener would hold the drain to its deadline: what is queued gets its chance now.
    for (const queue of this.queues.values()) queue.resume();
    let timer: NodeJS.Timeout | undefined;
    const drained =
      this.totalInFlight === 0 ||
      (await Promise.race([
        new Promise<boolean>((resolve) => this.drainWaiters.push(() => resolve(true))),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), drainMs);
        }),
      ]));
    clearTimeout(timer);
    let abandoned = 0;
    if (!drained) {
      for (const ctx of this.running) ctx.abort(new ShuttingDownError());
      for (const queue of this.queues.values()) {
        for (const delivery of queue.clear()) {
          abandoned++;
          this.hooks.delivered?.(
            delivery.target.name,
            'dropped',
            Date.now() - delivery.message.time,
            delivery.thread.id,
          );
          // Not handled: a transport that can redeliver (Redis) gives it to another daemon.
          delivery.abandon(new ShuttingDownError());
        }
      }
      abandoned += this.running.size;
    }
    await Promise.all([...this.subscriptions.values()].map((s) => s.unsubscribe()));
    await this.transport.close();
    return { drained, abandoned };
  }
}

const TIMED_OUT = Symbol('timed out');

/** Same organism.yaml entry, same module export and same tag: a reload leaves the listener as it is. */
function sameSpec(a: ListenerSpec, b: ListenerSpec): boolean {
  return (
    a.definition === b.definition && a.tag === b.tag && JSON.stringify(a.config) === JSON.stringify(b.config)
  );
}

async function invokeHandler(
  target: RuntimeListener,
  delivery: Delivery,
  ctx: DeliveryContext,
): Promise<HandlerResult> {
  if (delivery.payload !== undefined) return target.handler(delivery.payload, ctx);
  if (delivery.reply && target.onReply) return target.onReply(delivery.reply, ctx);
  return undefined;
}

/** The n-th output of a delivered message: the same id however often the message is handled. */
function derivedId(origin: Origin): string {
  origin.seq++;
  return createHash('sha256').update(`${origin.id}\u0000${origin.seq}`).digest('base64url').slice(0, 22);
}

function normalizeResult(result: HandlerResult): Outgoing[] {
  if (result === undefined || result === null) return [];
  if (typeof result === 'string') return result.trim() ? [{ kind: 'emit', payload: result }] : [];
  if (Array.isArray(result)) return result as Outgoing[];
  return [result as Outgoing];
}

/** Root tag of payload XML the runtime itself produced or repaired (so it starts with `<name`). */
function rootTag(xml: string): string {
  const match = /^<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(xml);
  return match?.[2] ?? '';
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function toolCallXml(tool: string, args: unknown): string {
  return encodePayload('tool-call', { tool, args: safeJson(args) });
}

function toolResultXml(result: ToolResult): string {
  const body = result.status === 'ok' ? safeJson(result.value) : safeJson(result.error);
  return encodePayload('tool-result', { tool: result.tool, status: result.status, result: body });
}
