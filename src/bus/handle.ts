/**
 * Handle: one queued delivery runs its listener's handler (or onReply) under the listener's
 * timeout, with a HandlerContext whose tool calls go through the bus. Its output is routed; a
 * throw or a timeout costs that one message (a `<SystemError>` to the caller), never the bus
 * (invariant 3).
 */
import type { HandlerResult } from '../listener/types.ts';
import { setTraceScope, traceScopeOf } from '../telemetry/types.ts';
import type { BusContext, Delivery } from './bus-context.ts';
import type { DeliveryOutcome } from './bus-types.ts';
import { DeliveryContext, type ToolCallPort } from './context.ts';
import { describeFailure, describeTimeout } from './failure.ts';
import type { Failures } from './failures.ts';
import type { InFlight } from './in-flight.ts';
import type { RuntimeListener } from './listeners.ts';
import type { Router } from './router.ts';
import type { ToolCalls } from './tool-calls.ts';

const TIMED_OUT = Symbol('timed out');

export class Handler implements ToolCallPort<HandlerClock> {
  constructor(
    private readonly bus: BusContext,
    private readonly router: Router,
    private readonly failures: Failures,
    private readonly tools: ToolCalls,
    private readonly inFlight: InFlight,
  ) {}

  /** A tool call of the handler run `run` (ToolCallPort): through the bus, in its thread and frame. */
  callTool(run: HandlerClock, ctx: DeliveryContext, name: string, args: unknown, key?: string) {
    const { target, thread, frame, message } = run.delivery;
    // Call ids from the message id and the call's place in this run: a redelivered message that
    // runs its handler again makes the same calls with the same ids (side effects act once). A
    // handler that names its calls (an agent resuming: turn and place) gets the id from that name.
    const id = key === undefined ? `${message.id}.call-${++run.calls}` : `${message.id}.${key}`;
    return this.tools.call(target, thread, frame, name, args, id, traceScopeOf(ctx), (on) => run.waiting(on));
  }

  /**
   * The queue's worker: settles the delivery exactly once, however the handler ends. Undefined
   * when the run is over on return (a handler that returned its result, outputs the transport took
   * at once: every hop in memory), so such a run costs no promise and its queue slot is free for
   * the next message without a turn of the microtask queue; else a promise that resolves when the
   * handler has run and its outputs are handed to the transport, which frees the queue's slot. The
   * delivery is done (acknowledged) once the transport has confirmed those outputs.
   */
  handle(delivery: Delivery): Promise<void> | undefined {
    const { message, thread, target } = delivery;
    const bus = this.bus;
    const run = new HandlerClock(target.timeoutMs, delivery, this.inFlight.confirmations());
    const ctx = new DeliveryContext(target, thread.id, message.from, message.tag, bus.logger, this, run);
    run.ctx = ctx;
    // Tracing on: the handler's tool calls and an agent's spans start under this hop's span.
    if (delivery.span) setTraceScope(ctx, delivery.span);
    bus.running.add(run);
    try {
      const returned = invokeHandler(target, delivery, ctx);
      // Only a handler that returned a promise can run out of time: a synchronous one has finished
      // (nothing could have interrupted it anyway), so it costs no timer and no extra promise.
      if (isThenable(returned)) return this.#awaitHandler(run, returned);
      const routed = this.#route(run, returned);
      if (routed !== undefined) return this.#awaitRouted(run, routed);
    } catch (error) {
      this.#failed(run, error);
    }
    this.#finish(run);
    return undefined;
  }

  /** The rest of a run whose handler returned a promise: under the listener's time limit. */
  async #awaitHandler(run: HandlerClock, returned: PromiseLike<HandlerResult>): Promise<void> {
    try {
      const result = await new Promise<HandlerResult>((resolve, reject) => {
        run.start(() => reject(TIMED_OUT));
        returned.then(resolve, reject);
      });
      const routed = this.#route(run, result);
      if (routed !== undefined) await routed;
    } catch (error) {
      this.#failed(run, error);
    }
    this.#finish(run);
  }

  /** The rest of a run whose outputs the transport has not taken yet. */
  async #awaitRouted(run: HandlerClock, routed: Promise<void>): Promise<void> {
    try {
      await routed;
    } catch (error) {
      this.#failed(run, error);
    }
    this.#finish(run);
  }

  /** The handler's outputs published; undefined when nothing is left to wait for (in memory). */
  #route(run: HandlerClock, result: HandlerResult): Promise<void> | undefined {
    const delivery = run.delivery;
    if (delivery.thread.stopped) return undefined;
    return this.router.route(delivery, result, run.confirmations);
  }

  /** The handler threw or timed out: that one message fails, never the bus (invariant 3). */
  #failed(run: HandlerClock, error: unknown): void {
    const { message, thread, frame, target, span } = run.delivery;
    const timedOut = error === TIMED_OUT;
    run.outcome = timedOut ? 'timeout' : 'error';
    run.ctx.abort(timedOut ? new Error('handler timed out') : error);
    const cause = timedOut
      ? describeTimeout(target.name, target.timeoutMs)
      : describeFailure(error, target.module);
    this.bus.logger.warn(
      { err: timedOut ? undefined : error, thread: thread.id, listener: target.name, at: cause.at },
      timedOut ? `handler timed out after ${target.timeoutMs} ms` : 'handler threw',
    );
    if (!thread.stopped) {
      // Operators see why (a record in the thread); the caller sees only the generic code.
      this.failures.recordFailure(thread, target.name, cause);
      this.failures.failFrame(thread, frame, cause.code, { id: message.id, seq: 0, trace: span });
    }
  }

  /** However the run ended: the delivery settled, and done once the outputs are confirmed. */
  #finish(run: HandlerClock): void {
    const delivery = run.delivery;
    const { message, thread, frame, target } = delivery;
    const bus = this.bus;
    run.stop();
    bus.running.delete(run);
    // Nothing can be delivered into the frame of a listener without onReply once it is handled.
    if (!target.onReply) bus.threads.pruneFrame(frame);
    bus.hooks.delivered?.(target.name, run.outcome, Date.now() - message.time, thread.id);
    delivery.span?.end(run.outcome);
    // The outputs are counted in flight already, so the thread cannot look idle in between (with
    // shared state the two even net out in one Redis batch).
    this.inFlight.settle(thread);
    const confirmations = run.confirmations;
    if (!confirmations || confirmations.length === 0) {
      delivery.done();
      return;
    }
    // The handler is finished: its slots (queue and transport) serve the next message while the
    // transport confirms the outputs, and the message is done (acknowledged) once they are.
    // Confirmations never reject (the publisher handles a failure).
    delivery.handled?.();
    void Promise.all(confirmations).then(delivery.done, delivery.done);
  }
}

/**
 * One run of a handler: the delivery it handles, its context, how many tool calls it has made, its
 * outcome so far and its time limit. The limit stands still while one of its tool calls waits for
 * a person (the approval step, README "Approval"): the time a person takes to answer is not the
 * handler's.
 */
class HandlerClock {
  /** Tool calls made so far without a key of their own (their ids count them). */
  calls = 0;
  /** The context the handler was given (set right after both are made: each names the other). */
  ctx!: DeliveryContext;
  outcome: DeliveryOutcome = 'ok';
  /** Where bus.running keeps it (see RunningHandlers). */
  slot = -1;
  #left: number;
  #since = 0;
  #paused = 0;
  #timer: NodeJS.Timeout | undefined;
  #expire: (() => void) | undefined;

  constructor(
    timeoutMs: number,
    readonly delivery: Delivery,
    /**
     * A transport shared by daemons confirms outputs a round trip later: collected, not awaited,
     * so the handler's slot is not held for it. In memory they are confirmed at once (undefined).
     */
    readonly confirmations: Promise<void>[] | undefined,
  ) {
    this.#left = timeoutMs;
  }

  start(expire: () => void): void {
    this.#expire = expire;
    if (this.#paused === 0) this.#run();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#expire = undefined;
  }

  /** A call of the handler starts (true) or stops (false) waiting for a person. */
  waiting(on: boolean): void {
    if (on) {
      if (this.#paused++ > 0 || this.#timer === undefined) return;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#left -= Date.now() - this.#since;
    } else if (this.#paused > 0 && --this.#paused === 0 && this.#expire) {
      this.#run();
    }
  }

  #run(): void {
    this.#since = Date.now();
    this.#timer = setTimeout(this.#expire!, Math.max(0, this.#left));
  }
}

/** The handler's (or onReply's) result as it returned it; a synchronous throw propagates. */
function invokeHandler(
  target: RuntimeListener,
  delivery: Delivery,
  ctx: DeliveryContext,
): HandlerResult | PromiseLike<HandlerResult> {
  if (delivery.payload !== undefined) return target.handler(delivery.payload, ctx);
  if (delivery.reply && target.onReply) return target.onReply(delivery.reply, ctx);
  return undefined;
}

function isThenable(value: unknown): value is PromiseLike<HandlerResult> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
