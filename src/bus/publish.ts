/**
 * Publish (wrap): every message the bus sends, whoever asked for it, leaves through here. The
 * hop is charged against the thread's budgets, the envelope is built from the runtime's own state
 * (invariant 2), the message is recorded in the thread history and handed to the transport. A
 * budget that runs out is recorded here too, since this is where it is charged.
 */
import { hash } from 'node:crypto';
import { buildEnvelope } from '../xml/envelope.ts';
import type { BusContext, Origin } from './bus-context.ts';
import { lastIdCount, nextId } from './ids.ts';
import type { InFlight } from './in-flight.ts';
import type { Journal } from './journal/journal.ts';
import type { Message, MessageKind } from './message.ts';
import { SYSTEM_SENDER, systemErrorXml } from './system.ts';
import type { Frame, ThreadState } from './threads.ts';
import { ACCEPTED, journalOf } from './transport/memory.ts';

/** A published message's id (undefined: a budget stopped it), now or once the transport confirms it. */
export type Published = string | undefined | Promise<string | undefined>;

export class Publisher {
  readonly #journal: Journal | undefined;
  /** Outputs of a delivered message get ids derived from it (derivedId) rather than fresh ones. */
  readonly #stableIds: boolean;

  constructor(
    private readonly bus: BusContext,
    private readonly inFlight: InFlight,
  ) {
    this.#journal = journalOf(bus.transport);
    // Shared (redeliverable) or journaled transport: a handler run again after a crash gives its
    // outputs the same ids, so the effects they cause downstream stay once (tool call ids derive
    // from them).
    this.#stableIds = bus.store.shared || this.#journal !== undefined;
  }

  /**
   * Wraps a payload in an envelope from the runtime's own state, records it in the thread history
   * and publishes it. Returns the message id, or undefined when a budget stopped it: at once when
   * the transport took the message at once (in memory), else once it has confirmed it. Not an
   * async function: a hop in memory costs no promise here, and its caller no turn of the
   * microtask queue (a bad payload throws, which every caller treats as a refused output).
   */
  publish(
    thread: ThreadState,
    frame: Frame | null,
    kind: MessageKind,
    from: string,
    to: string,
    tag: string,
    payloadXml: string,
    depth = frame?.depth ?? 0,
    origin?: Origin,
    traceparent = origin?.trace?.traceparent,
  ): Published {
    const bus = this.bus;
    const budget = bus.threads.chargeHop(thread, depth);
    if (!budget.ok) {
      this.#overBudget(thread, from, budget.what, budget.limit);
      return undefined;
    }
    // An output the journal already holds is not sent again: it replays on its own.
    const stable = origin !== undefined && this.#stableIds;
    const id = stable ? derivedId(origin) : nextId();
    if (origin && this.#journal?.journaledBefore(id)) return id;
    const message: Message = {
      id,
      idCount: stable ? undefined : lastIdCount(),
      thread: thread.id,
      frame: frame?.id ?? '',
      from,
      to,
      tag,
      envelope: buildEnvelope({ from, to, thread: thread.id, traceparent }, payloadXml),
      kind,
      hop: thread.hops,
      // chargeHop read the clock just now (one Date.now() a hop, not two).
      time: thread.lastActive,
    };
    bus.record(thread.id, message.id, from, to, kind, payloadXml, message.time);
    // No frame (a reply nobody can receive) or an ingress target: recorded, nothing to deliver.
    if (!frame || !bus.listeners.has(to)) return message.id;
    thread.inFlight++;
    this.inFlight.published(thread, frame, message);
    if (origin?.confirmations) {
      origin.confirmations.push(
        bus.transport.publish(message).catch((error: unknown) => this.#refused(thread, to, error)),
      );
      return message.id;
    }
    let accepted: Promise<void>;
    try {
      accepted = bus.transport.publish(message);
    } catch (error) {
      this.#refused(thread, to, error);
      return id;
    }
    if (accepted === ACCEPTED) return id;
    return accepted.then(
      () => id,
      (error: unknown) => {
        this.#refused(thread, to, error);
        return id;
      },
    );
  }

  /** The transport would not take a message: it is not in flight after all. */
  #refused(thread: ThreadState, to: string, error: unknown): void {
    this.bus.logger.error({ err: error, thread: thread.id, to }, 'transport refused a message');
    this.inFlight.settle(thread);
  }

  /** A budget ran out: the sender is told in the history; a hop budget also stops the thread. */
  #overBudget(thread: ThreadState, from: string, what: 'hops' | 'depth', limit: number): void {
    const bus = this.bus;
    const xml = systemErrorXml('bus.budget', `(${what} limit ${limit})`);
    bus.record(thread.id, nextId(), SYSTEM_SENDER, from, 'system-error', xml);
    if (what === 'hops' && !thread.stopped) {
      thread.stopped = true;
      bus.history.markStopped(thread.id);
      bus.hooks.thread?.(thread.id, 'stopped');
    }
    bus.logger.warn({ thread: thread.id, listener: from, what, limit }, 'thread budget exhausted');
  }
}

/** The n-th output of a delivered message: the same id however often the message is handled. */
function derivedId(origin: Origin): string {
  origin.seq++;
  return hash('sha256', `${origin.id}\u0000${origin.seq}`, 'base64url').slice(0, 22);
}
