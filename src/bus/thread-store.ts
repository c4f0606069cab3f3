/**
 * Where the bus's thread state lives, behind one seam: the bus always has a ThreadStore and its
 * steps call it without asking which one it is. Two implementations:
 * - LocalThreadStore (below): one daemon. The registry and history in memory are the whole truth,
 *   so there is nothing to load, watch or write through; every method returns at once.
 * - a shared store (the Redis transport, src/bus/transport/redis/thread-store.ts): every change to
 *   the registry and the history is written through to shared storage, a delivered message's
 *   thread and frame are loaded before the bus looks them up, and "in flight" is counted across
 *   all daemons, so any daemon can continue any thread.
 * How in-flight work is counted differs between the two (on this daemon, or in the store); the bus
 * picks its counting once from `shared` (see in-flight.ts), not in each step.
 */
import type { ThreadHistory } from './history/index.ts';
import type { Message } from './message.ts';
import type { Frame, ThreadRegistry, ThreadRegistryObserver } from './threads.ts';

/** What a shared store tells the bus about other daemons. */
export interface ThreadStoreEvents {
  /** The thread has nothing in flight on any daemon any more. */
  idle(thread: string): void;
  /** Another daemon stopped the thread (budget or kill); the store has marked it stopped here. */
  stopped(thread: string): void;
}

/** What every thread store does. */
interface ThreadStoreBase {
  /** Called once by the bus with the registry and history it keeps in step with the shared state. */
  attach(registry: ThreadRegistry, history: ThreadHistory, events: ThreadStoreEvents): void;
  /**
   * Brings a thread (and a frame with its parent) that another daemon made into the registry, and
   * refreshes its hops, stopped flag and in-flight count. Resolves when the registry is current;
   * with `wholeHistory`, also this daemon's copy of the thread's history (else it may hold only
   * what was recorded here, see RedisThreadStore). Returns nothing when it was current at once
   * (the state came with the message, or nothing is shared): the common case costs no promise.
   * May throw.
   */
  load(thread: string, frame?: string, wholeHistory?: boolean): Promise<void> | undefined;
  /**
   * What delivering `message` needs loaded (its thread, its frame with the frame's parent), as
   * load() does; with `wholeHistory`, the thread's history too. A message that carries its frame
   * (Message.frameDepth) to a daemon that knows its thread needs nothing from the store.
   */
  loadFor(message: Message, wholeHistory: boolean): Promise<void> | undefined;
  /**
   * Someone on this daemon started (true) or stopped (false) following the thread live: its
   * history entries made on any daemon must reach this one as they happen.
   */
  watch(thread: string, on: boolean): void;
  close(): Promise<void>;
}

/** One daemon's store: nothing is shared, so in-flight work is counted on this daemon. */
export interface LocalStore extends ThreadStoreBase {
  readonly shared: false;
}

/**
 * Several daemons' store. It sees each change to the registry (the registry's observer), counts
 * in flight across daemons, and a message may be handled again on another daemon after a crash.
 */
export interface SharedThreadStore extends ThreadStoreBase, ThreadRegistryObserver {
  readonly shared: true;
  /**
   * A message of the thread was published: it is in flight on some daemon until settled. `into`:
   * the frame it was sent into, when it opened none of its own (a reply or a report).
   */
  published(thread: string, into?: Frame): void;
  /** One published message of the thread is finished with; resolves with how many are still in flight (all daemons). */
  settled(thread: string): Promise<number>;
}

export type ThreadStore = LocalStore | SharedThreadStore;

/** The store of one daemon on its own: the registry and history in memory are all there is. */
export class LocalThreadStore implements LocalStore {
  readonly shared = false;

  attach(_registry: ThreadRegistry, _history: ThreadHistory, _events: ThreadStoreEvents): void {}

  /** The registry is the whole truth: always current. */
  load(_thread: string, _frame?: string, _wholeHistory?: boolean): undefined {
    return undefined;
  }

  loadFor(_message: Message, _wholeHistory: boolean): undefined {
    return undefined;
  }

  /** Every history entry is made here, so a follower hears it already. */
  watch(_thread: string, _on: boolean): void {}

  close(): Promise<void> {
    return Promise.resolve();
  }
}
