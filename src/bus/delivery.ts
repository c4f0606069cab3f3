/**
 * Delivery: what the transport hands over for a listener is checked before it may cost a handler
 * run. The thread, frame and target must still exist, the envelope must match its routing record,
 * the payload is decoded and validated by the target's schema (a reply by the schema it was
 * declared with), and the message goes into the target's bounded queue or is refused as busy.
 */
import { OrganismError } from '../errors.ts';
import type { IncomingReply } from '../listener/types.ts';
import type { PayloadVerdict } from '../schema/check.ts';
import type { HopSpan } from '../telemetry/types.ts';
import { parseEnvelopeOf, payloadValue } from '../xml/envelope-of.ts';
import type { BusContext, Delivery } from './bus-context.ts';
import type { Failures } from './failures.ts';
import type { InFlight } from './in-flight.ts';
import type { RuntimeListener } from './listeners.ts';
import type { Message } from './message.ts';
import type { Frame, ThreadState } from './threads.ts';

/** The outcome of a delivery nobody waits for (see deliverDetached). */
const ignore = (): void => {};

export class Deliverer {
  constructor(
    private readonly bus: BusContext,
    private readonly failures: Failures,
    private readonly inFlight: InFlight,
  ) {}

  /** The transport's callback: settles when the message is handled, refused or dropped. */
  deliver(message: Message, handled?: () => void): Promise<void> {
    // With shared thread state, the thread and frame are loaded first (see in-flight.ts).
    return this.inFlight.deliver(message, handled, this.#deliverNow);
  }

  /**
   * The same for a transport that does not wait for the outcome (in memory, no journal): no
   * promise and no closures are made, so a message waiting in a queue costs only its records.
   */
  readonly deliverDetached = (message: Message): void => {
    // Shared thread state counts a delivery until its promise settles: it needs the promise.
    if (this.bus.store.shared) this.deliver(message).catch(ignore);
    else this.#take(message, undefined, ignore, ignore);
  };

  readonly #deliverNow = (message: Message, handled: (() => void) | undefined): Promise<void> =>
    new Promise<void>((resolve, reject) => this.#take(message, handled, resolve, reject));

  /**
   * The message, its thread and frame current in the registry: checked and queued. `done` is
   * called once it is handled, refused or dropped; `abandon` when it is left unhandled.
   */
  #take(
    message: Message,
    handled: (() => void) | undefined,
    done: () => void,
    abandon: (reason: unknown) => void,
  ): void {
    const bus = this.bus;
    const thread = bus.threads.thread(message.thread);
    // A listener removed by a reload still takes what was published to it before (retiring).
    const target = bus.listeners.get(message.to) ?? bus.retiring.get(message.to);
    const frame = bus.threads.frame(message.frame);
    if (!thread || !target || !frame || thread.stopped) {
      // The frame was pruned (its caller already got an answer) or the thread stopped: nothing to do.
      if (target) bus.hooks.delivered?.(target.name, 'dropped', Date.now() - message.time, message.thread);
      this.inFlight.settle(thread);
      done();
      return;
    }
    let reply: IncomingReply | undefined;
    let span: HopSpan | undefined;
    try {
      // What publish wrote for this record is parsed as such (only the payload); anything else whole.
      const envelope = parseEnvelopeOf(message.envelope, message, bus.xmlLimits);
      // Tracing on: the hop's span, a child of the one that published the message.
      if (bus.tracing) span = bus.tracing.hop(message, envelope.traceparent, envelope.payloadXml);
      if (
        envelope.thread !== message.thread ||
        envelope.from !== message.from ||
        envelope.tag !== message.tag
      ) {
        throw new OrganismError('envelope.mismatch', 'envelope does not match its routing record');
      }
      if (message.kind === 'message') {
        const decoded = payloadValue(envelope, target.schema);
        const verdict = target.validate(decoded);
        const xml = envelope.payloadXml;
        if (verdict instanceof Promise) {
          // A Standard Schema that checks asynchronously: the message is queued once it has said.
          verdict.then(
            (v) =>
              this.#checked(message, handled, thread, frame, target, decoded, v, xml, span, done, abandon),
            abandon,
          );
          return;
        }
        this.#checked(message, handled, thread, frame, target, decoded, verdict, xml, span, done, abandon);
        return;
      } else {
        const known = bus.byTag.get(message.tag)?.[0] ?? this.#responseSchemaOwner(message.tag);
        reply = {
          tag: message.tag,
          kind:
            message.kind === 'huh' ? 'huh' : message.kind === 'system-error' ? 'system-error' : 'response',
          payload: payloadValue(envelope, known?.schema ?? {}),
          xml: envelope.payloadXml,
        };
      }
    } catch (error) {
      bus.logger.warn({ err: error, thread: thread.id, to: message.to }, 'delivery refused a message');
      bus.hooks.delivered?.(target.name, 'invalid', Date.now() - message.time, thread.id);
      span?.end('invalid');
      this.failures.huhToSender(thread, frame, message, 'parse', message.envelope, undefined, {
        id: message.id,
        seq: 0,
        trace: span,
      });
      done();
      return;
    }
    this.#enqueue({
      message,
      thread,
      frame,
      target,
      payload: undefined,
      reply,
      done,
      handled,
      abandon,
      span,
    });
  }

  /** A payload the target's schema has judged: refused with a `<huh>` to its sender, or queued. */
  #checked(
    message: Message,
    handled: (() => void) | undefined,
    thread: ThreadState,
    frame: Frame,
    target: RuntimeListener,
    decoded: Record<string, unknown>,
    verdict: PayloadVerdict,
    payloadXml: string,
    span: HopSpan | undefined,
    done: () => void,
    abandon: (reason: unknown) => void,
  ): void {
    if (verdict instanceof Error) {
      this.bus.hooks.delivered?.(target.name, 'invalid', Date.now() - message.time, thread.id);
      span?.end('invalid');
      this.failures.huhToSender(thread, frame, message, 'validate', payloadXml, verdict.message, {
        id: message.id,
        seq: 0,
        trace: span,
      });
      done();
      return;
    }
    // A Standard Schema's output (defaults, stripped keys, transforms) is what the handler gets.
    const payload = verdict === null ? decoded : (verdict.value as Record<string, unknown>);
    this.#enqueue({
      message,
      thread,
      frame,
      target,
      payload,
      reply: undefined,
      done,
      handled,
      abandon,
      span,
    });
  }

  /** Into the target's queue, or refused as busy (the frame fails, the sender hears why). */
  #enqueue(delivery: Delivery): void {
    const { message, thread, frame, target, span } = delivery;
    const queue = this.bus.queues.get(target.name)!;
    if (queue.offer(thread.id, delivery)) {
      // Nobody else holds a detached message (see deliverDetached), and its envelope is parsed:
      // the text need not wait in the queue beside the payload decoded from it (~230 bytes of a
      // small one, per waiting message).
      if (delivery.done === ignore) message.envelope = '';
      return;
    }
    this.bus.hooks.delivered?.(target.name, 'busy', Date.now() - message.time, thread.id);
    span?.end('busy');
    this.failures.failFrame(thread, frame, 'bus.busy', { id: message.id, seq: 0, trace: span });
    this.inFlight.settle(thread);
    delivery.done();
  }

  /** The schema a reply tag was declared with, by the listener whose `response` it is. */
  #responseSchemaOwner(tag: string): { schema: Record<string, unknown> } | undefined {
    for (const listener of this.bus.listeners.values()) {
      if (listener.response?.tag === tag) return { schema: listener.response.schema };
    }
    return undefined;
  }
}
