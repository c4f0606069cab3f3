/**
 * Failures as messages: input that does not parse, validate or route earns its sender a `<huh>`,
 * a delivery or handler failure earns the caller a `<SystemError>`, and the failed frame ends.
 * These are ordinary messages published under the runtime's own name, so the thread history
 * shows every failure where it happened.
 */
import type { BusContext, Origin } from './bus-context.ts';
import { FAILURE_KIND, type FailureCause, failureXml } from './failure.ts';
import { nextId } from './ids.ts';
import type { InFlight } from './in-flight.ts';
import type { RuntimeListener } from './listeners.ts';
import type { Message } from './message.ts';
import { rootTag } from './payload-text.ts';
import type { Publisher } from './publish.ts';
import { type HuhReason, huhXml, SYSTEM_SENDER, type SystemErrorCode, systemErrorXml } from './system.ts';
import type { Frame, ThreadState } from './threads.ts';

export class Failures {
  constructor(
    private readonly bus: BusContext,
    private readonly publisher: Publisher,
    private readonly inFlight: InFlight,
  ) {}

  /** `<huh>` to whoever sent `message`, in the frame the sender handles messages in. */
  huhToSender(
    thread: ThreadState,
    frame: Frame,
    message: Message,
    reason: HuhReason,
    attempt: string,
    detail?: string,
    origin?: Origin,
  ): void {
    const threads = this.bus.threads;
    const xml = huhXml(reason, attempt, detail);
    const senderFrame =
      message.kind === 'message' ? (frame.parent ? threads.frame(frame.parent) : null) : frame;
    if (message.kind === 'message') threads.pruneFrame(frame);
    void this.#sendSystem(thread, senderFrame ?? null, message.from, 'huh', xml, origin);
    this.inFlight.settle(thread);
  }

  huhToSelf(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    reason: HuhReason,
    attempt: string,
    detail?: string,
    origin?: Origin,
  ): void {
    void this.#sendSystem(thread, frame, source.name, 'huh', huhXml(reason, attempt, detail), origin);
  }

  routingError(thread: ThreadState, frame: Frame, source: RuntimeListener, origin?: Origin): void {
    void this.#sendSystem(thread, frame, source.name, 'system-error', systemErrorXml('bus.routing'), origin);
  }

  /**
   * The work in `frame` failed: its caller gets a `<SystemError>` in the caller's own frame, and
   * the frame ends. When the failing delivery was itself a reply, the listener handling it failed
   * its own task, which is what its caller learns.
   */
  failFrame(thread: ThreadState, frame: Frame, code: SystemErrorCode, origin?: Origin): void {
    const threads = this.bus.threads;
    const parent = frame.parent ? (threads.frame(frame.parent) ?? null) : null;
    threads.pruneFrame(frame);
    void this.#sendSystem(thread, parent, frame.caller, 'system-error', systemErrorXml(code), origin);
  }

  /**
   * A handler of `listener` failed: why, recorded in the thread for viewers (a record, delivered to
   * no one). Recorded before the caller's `<SystemError>`, so the thread reads in order.
   */
  recordFailure(thread: ThreadState, listener: string, cause: FailureCause): void {
    this.bus.record(thread.id, nextId(), listener, SYSTEM_SENDER, FAILURE_KIND, failureXml(listener, cause));
  }

  /** A runtime-originated message to `to` in `frame` (null: `to` is an ingress; record only). */
  async #sendSystem(
    thread: ThreadState,
    frame: Frame | null,
    to: string,
    kind: 'huh' | 'system-error',
    xml: string,
    origin?: Origin,
  ): Promise<void> {
    await this.publisher.publish(
      thread,
      frame,
      kind,
      SYSTEM_SENDER,
      to,
      rootTag(xml),
      xml,
      undefined,
      origin,
    );
  }
}
