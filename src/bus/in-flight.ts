/**
 * In-flight bookkeeping: how many messages are published and not yet finished with, per thread
 * and in total, when a thread goes idle, and when a draining shutdown may proceed. With a shared
 * thread store the per-thread count lives in Redis (another daemon may settle it) and only work
 * running here is counted locally.
 */
import type { BusContext } from './bus-context.ts';
import type { ThreadState } from './threads.ts';

export class InFlight {
  /** Messages this daemon is answerable for right now; shutdown drains it to zero. */
  total = 0;
  #drainWaiters: Array<() => void> = [];

  constructor(private readonly bus: BusContext) {}

  /** One delivered message is finished with (handled, refused or dropped). Exactly once per delivery. */
  settle(thread: ThreadState | undefined): void {
    if (this.bus.store) {
      this.#settleShared(thread);
      return;
    }
    this.total = Math.max(0, this.total - 1);
    if (thread) {
      thread.inFlight = Math.max(0, thread.inFlight - 1);
      thread.lastActive = Date.now();
    }
    if (thread && thread.inFlight === 0) this.threadIdle(thread.id);
    this.resolveDrain();
  }

  /**
   * Shared state: the count across daemons decides idleness (the Redis reply says what is left).
   * The local count waits for that reply: lowered at once, it could read 0 ("idle") for a moment
   * while another daemon is still working on the thread.
   */
  #settleShared(thread: ThreadState | undefined): void {
    if (!thread) return;
    thread.lastActive = Date.now();
    this.bus.store!.settled(thread.id).then(
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
