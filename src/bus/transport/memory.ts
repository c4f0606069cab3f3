/**
 * The in-process transport: publish hands the message straight to the target's subscriber, which
 * queues it (the scheduler decides when it runs). Nothing is copied or serialized beyond the plain Message record, which is what keeps a
 * hop cheap; the Redis transport carries the same record between processes.
 *
 * With a journal (the daemon's default, see ./journal/journal.ts), every published message is
 * appended to it before it is handed over, and marked handled when its delivery settles (handled,
 * refused or dropped; not when it is abandoned at shutdown, so it runs again after the restart).
 * The append is a buffered line: the hop never waits on the disk. Ingress waits for durable().
 */
import { TransportError } from '../../errors.ts';
import type { Journal, JournaledFrame } from '../journal/journal.ts';
import type { Message } from '../message.ts';
import type { ThreadRegistry } from '../threads.ts';
import type { Deliver, SubscribeOptions, Subscription, Transport } from './types.ts';

/** A subscriber: how it takes a message when nothing waits for the outcome, and when something does. */
interface Subscriber {
  deliver: Deliver;
  detached: ((message: Message) => void) | undefined;
}

const ignore = (): void => {};

/** What publish returns for a message it has taken: one settled promise shared by every message. */
export const ACCEPTED: Promise<void> = Promise.resolve();

export interface MemoryTransportOptions {
  /** Journal every message and its handled mark (crash recovery in the single-daemon mode). */
  journal?: Journal;
}

export class MemoryTransport implements Transport {
  readonly name = 'memory';
  readonly journal: Journal | undefined;
  readonly #subscribers = new Map<string, Subscriber>();
  #registry: ThreadRegistry | undefined;
  #closed = false;

  constructor(options: MemoryTransportOptions = {}) {
    this.journal = options.journal;
  }

  /** The bus's registry, read for the frames and scope a journaled message needs after a restart. */
  bind(registry: ThreadRegistry): void {
    this.#registry = registry;
  }

  /**
   * The message is taken at once: publish returns ACCEPTED itself (no promise made per message),
   * so a publisher that sees it need not wait a microtask turn for a hand-over that has happened.
   */
  publish(message: Message): Promise<void> {
    try {
      this.#publish(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return ACCEPTED;
  }

  #publish(message: Message): void {
    if (this.#closed) throw new TransportError('transport.closed', 'the memory transport is closed');
    const subscriber = this.#subscribers.get(message.to);
    if (!subscriber) throw new TransportError('transport.no_subscriber', `no subscriber for ${message.to}`);
    const journal = this.journal;
    if (!journal) {
      // Not awaited: publish means "accepted", and nothing here needs to know when it settles.
      if (subscriber.detached) subscriber.detached(message);
      else subscriber.deliver(message).catch(ignore);
      return;
    }
    const deliver = subscriber.deliver;
    const segment = journal.accept(
      message,
      this.#framesOf(message),
      this.#registry?.thread(message.thread)?.scope,
    );
    this.#handOver(journal, deliver, message, segment);
  }

  /**
   * Delivers a message the journal gave back at start (accepted before a crash, never handled).
   * False when its listener is gone; the message is then marked handled, as a drop.
   */
  redeliver(message: Message): boolean {
    const journal = this.journal;
    const segment = journal?.recoveredSegment(message.id);
    if (!journal || segment === undefined) return false;
    const subscriber = this.#subscribers.get(message.to);
    if (!subscriber) {
      journal.handled(message.id, segment);
      return false;
    }
    this.#handOver(journal, subscriber.deliver, message, segment);
    return true;
  }

  /** Resolves when every message published so far is durable (per the journal's fsync mode). */
  durable(): Promise<void> | undefined {
    return this.journal?.durable();
  }

  subscribe(listener: string, deliver: Deliver, options?: SubscribeOptions): Subscription {
    if (this.#closed) throw new TransportError('transport.closed', 'the memory transport is closed');
    if (this.#subscribers.has(listener)) {
      throw new TransportError('transport.duplicate_subscriber', `${listener} already has a subscriber`);
    }
    const subscriber: Subscriber = { deliver, detached: options?.deliverDetached };
    this.#subscribers.set(listener, subscriber);
    return {
      unsubscribe: async () => {
        if (this.#subscribers.get(listener) === subscriber) this.#subscribers.delete(listener);
      },
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#subscribers.clear();
    await this.journal?.close();
  }

  #handOver(journal: Journal, deliver: Deliver, message: Message, segment: number): void {
    // Settled: handled, refused or dropped. Rejected (abandoned at shutdown): left to run again.
    deliver(message).then(
      () => journal.handled(message.id, segment),
      () => {},
    );
  }

  /** The message's frame and the frames above it (a reply's way back), as the registry has them. */
  #framesOf(message: Message): JournaledFrame[] {
    const frames: JournaledFrame[] = [];
    const registry = this.#registry;
    if (!registry) return frames;
    let frame = registry.frame(message.frame);
    while (frame) {
      frames.push([frame.id, frame.listener, frame.caller, frame.parent, frame.depth]);
      frame = frame.parent ? registry.frame(frame.parent) : undefined;
    }
    return frames;
  }
}

/** The journal behind a transport, when it is a journaled memory transport. */
export function journalOf(transport: Transport): Journal | undefined {
  return transport instanceof MemoryTransport ? transport.journal : undefined;
}
