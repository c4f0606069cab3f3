/**
 * In-flight bookkeeping: how many messages are published and not yet finished with, per thread
 * and in total, when a thread goes idle, and when a draining shutdown may proceed. Two ways to
 * count, picked once from the thread store (createInFlight), so the steps that publish, deliver,
 * handle and settle call one object and never ask which:
 * - LocalInFlight: one daemon; a message counts from its publish to its settle, here.
 * - SharedInFlight: the per-thread count lives in the shared store (another daemon may settle it),
 *   a delivered message's thread is loaded first, and only work running here is counted locally.
 */
import type { BusContext, Origin } from './bus-context.ts';
import type { Message } from './message.ts';
import type { SharedThreadStore } from './thread-store.ts';
import type { Frame, ThreadState } from './threads.ts';

/** Hands a message to its listener's queue (Deliverer's); settles when it is done with. */
export type DeliverNow = (message: Message, handled: (() => void) | undefined) => Promise<void>;

export abstract class InFlight {
  /** Messages this daemon is answerable for right now; shutdown drains it to zero. */
  total = 0;
  #drainWaiters: Array<() => void> = [];

  constructor(protected readonly bus: BusContext) {}

  /**
   * A message of the thread was published to a listener (already counted in `thread.inFlight`):
   * it is in flight until settled.
   */
  abstract published(thread: ThreadState, frame: Frame, message: Message): void;

  /** The transport hands over a message: what must happen before `deliverNow` may look it up. */
  abstract deliver(
    message: Message,
    handled: (() => void) | undefined,
    deliverNow: DeliverNow,
  ): Promise<void>;

  /** One delivered message is finished with (handled, refused or dropped). Exactly once per delivery. */
  abstract settle(thread: ThreadState | undefined): void;

  /**
   * Where a handler's outputs put their transport confirmations, when they are not awaited one
   * by one (see Origin.confirmations); undefined to await each publish.
   */
  abstract confirmations(): Origin['confirmations'];

  /** Nothing of the thread is in flight (here, or with shared state on any daemon). */
  threadIdle(thread: string): void {
    const set = this.bus.watchers.get(thread);
    if (set) for (const w of set) w.onIdle?.();
    this.bus.hooks.thread?.(thread, 'idle');
  }

  resolveDrain(): void {
    if (this.total === 0 && this.#drainWaiters.length > 0) {
      const waiters = this.#drainWaiters;
      this.#drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Resolves the next time nothing is in flight (callers check `total` first). */
  drained(): Promise<void> {
    return new Promise<void>((resolve) => this.#drainWaiters.push(resolve));
  }
}

/** The counting the bus's thread store calls for. */
export function createInFlight(bus: BusContext): InFlight {
  const store = bus.store;
  return store.shared ? new SharedInFlight(bus, store) : new LocalInFlight(bus);
}

/** One daemon: everything is counted here, synchronously. */
class LocalInFlight extends InFlight {
  published(): void {
    this.total++;
  }

  deliver(message: Message, handled: (() => void) | undefined, deliverNow: DeliverNow): Promise<void> {
    return deliverNow(message, handled);
  }

  settle(thread: ThreadState | undefined): void {
    this.total = Math.max(0, this.total - 1);
    if (thread) {
      thread.inFlight = Math.max(0, thread.inFlight - 1);
      if (thread.inFlight === 0) {
        // Idle from now (collectIdle reads lastActive of idle threads only, so a settle that
        // leaves work in flight needs no clock: a hop in memory reads it once, in chargeHop).
        thread.lastActive = Date.now();
        this.threadIdle(thread.id);
      }
    }
    this.resolveDrain();
  }

  /** In memory the transport confirms at once: each publish is awaited. */
  confirmations(): undefined {
    return undefined;
  }
}

/** Several daemons: the per-thread count lives in the shared store; `total` counts deliveries running here. */
class SharedInFlight extends InFlight {
  readonly #store: SharedThreadStore;

  constructor(bus: BusContext, store: SharedThreadStore) {
    super(bus);
    this.#store = store;
  }

  published(thread: ThreadState, frame: Frame, message: Message): void {
    // A frame nothing can answer into travels with its message (see Message.frameDepth).
    if (message.kind === 'message' && !frame.parent) message.frameDepth = frame.depth;
    // Counted in the store, since another daemon may settle it. A reply or report goes into a
    // frame that exists already: the store must keep it now.
    this.#store.published(thread.id, message.kind === 'message' ? undefined : frame);
    // Whichever daemon takes the message loads or rebuilds its frame (this one too). A copy kept
    // here would stay forever whenever another daemon takes it: a thread looping across daemons
    // would pile up one frame per hop on each. A frame with a parent is kept (pruning the parent
    // here prunes it too).
    if (message.kind === 'message') this.bus.threads.forgetFrame(frame);
  }

  /**
   * The thread and frame may be another daemon's: loaded first (an agent reads the thread's
   * history, so it gets all of it). A failed load rejects, which leaves the message to the
   * transport to redeliver.
   */
  deliver(message: Message, handled: (() => void) | undefined, deliverNow: DeliverNow): Promise<void> {
    this.total++;
    const target = this.bus.listeners.get(message.to) ?? this.bus.retiring.get(message.to);
    let delivered: Promise<void>;
    try {
      const loading = this.#store.loadFor(message, target?.agent === true);
      delivered = loading ? loading.then(() => deliverNow(message, handled)) : deliverNow(message, handled);
    } catch (error) {
      delivered = Promise.reject(error);
    }
    return delivered.finally(this.#loadedDone);
  }

  /** A delivery that needed its thread loaded is over. */
  readonly #loadedDone = (): void => {
    this.total--;
    this.resolveDrain();
  };

  /**
   * The count across daemons decides idleness (the store's reply says what is left). The local
   * count waits for that reply: lowered at once, it could read 0 ("idle") for a moment while
   * another daemon is still working on the thread.
   */
  settle(thread: ThreadState | undefined): void {
    if (!thread) return;
    thread.lastActive = Date.now();
    this.#store.settled(thread.id).then(
      (left) => {
        thread.inFlight = left;
        if (left === 0) this.threadIdle(thread.id);
      },
      (error: unknown) => {
        thread.inFlight = Math.max(0, thread.inFlight - 1);
        this.bus.logger.error({ err: error, thread: thread.id }, 'shared thread state: settle failed');
      },
    );
  }

  /** Outputs are confirmed a round trip later: collected, not awaited, so the handler's slot is free sooner. */
  confirmations(): Promise<void>[] {
    return [];
  }
}
