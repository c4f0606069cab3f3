/**
 * Lifecycle: opening listeners (a bounded queue and a transport subscription each) at start and
 * on a reload, closing a retired one once its work is done, collecting idle threads, and the
 * draining shutdown that lets in-flight work finish before it cuts off what is left.
 */
import { ShuttingDownError } from '../errors.ts';
import type { BusContext, Delivery } from './bus-context.ts';
import type { Deliverer } from './delivery.ts';
import type { Handler } from './handle.ts';
import type { InFlight } from './in-flight.ts';
import type { RuntimeListener } from './listeners.ts';
import { ListenerQueue } from './scheduler.ts';

export class Lifecycle {
  #sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly bus: BusContext,
    private readonly deliverer: Deliverer,
    private readonly handler: Handler,
    private readonly inFlight: InFlight,
  ) {}

  /** Subscribes every listener on the transport and starts collecting idle threads. */
  start(): void {
    const bus = this.bus;
    bus.started = true;
    for (const listener of bus.listeners.values()) this.open(listener);
    const every = Math.max(1_000, Math.min(bus.options.limits.thread_idle_ms, 60_000));
    this.#sweeper = setInterval(() => bus.threads.collectIdle(), every);
    this.#sweeper.unref();
  }

  /** A queue and a transport subscription for one listener. */
  open(listener: RuntimeListener): void {
    const bus = this.bus;
    const queue = new ListenerQueue<Delivery>(
      { capacity: listener.queueLength, maxConcurrent: listener.maxConcurrent },
      (delivery) => this.handler.handle(delivery),
    );
    bus.queues.set(listener.name, queue);
    bus.subscriptions.set(
      listener.name,
      // A transport that fetches work (Redis) takes no more than the queue can hold, and leaves
      // the rest to other daemons: twice the concurrency keeps the handlers busy between reads.
      bus.transport.subscribe(listener.name, (message, handled) => this.deliverer.deliver(message, handled), {
        maxInFlight: Math.min(listener.queueLength, listener.maxConcurrent * 2),
        deliverDetached: this.deliverer.deliverDetached,
        readsHistory: listener.agent,
      }),
    );
  }

  /**
   * Closes one listener's transport subscription: this daemon takes no more of its messages (what
   * it queued still runs, and it still routes to it). False if it has none.
   */
  async stopReading(name: string): Promise<boolean> {
    const subscription = this.bus.subscriptions.get(name);
    if (!subscription) return false;
    this.bus.subscriptions.delete(name);
    await subscription.unsubscribe();
    return true;
  }

  /** A removed listener has finished its queued work: its queue and subscription go. */
  retire(name: string): void {
    const bus = this.bus;
    if (!bus.retiring.has(name) || bus.stopping) return;
    bus.retiring.delete(name);
    bus.queues.delete(name);
    const subscription = bus.subscriptions.get(name);
    bus.subscriptions.delete(name);
    void subscription?.unsubscribe();
  }

  /**
   * Stops accepting injections, lets in-flight messages finish for up to `drainMs`, then aborts
   * what is still running and closes the transport. Resolves with how many messages were cut off.
   */
  async stop(
    drainMs = this.bus.options.bus.drain_timeout_ms,
  ): Promise<{ drained: boolean; abandoned: number }> {
    const bus = this.bus;
    if (bus.stopping) return { drained: true, abandoned: 0 };
    bus.stopping = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    // A paused listener would hold the drain to its deadline: what is queued gets its chance now.
    for (const queue of bus.queues.values()) queue.resume();
    const drained = this.inFlight.total === 0 || (await within(this.inFlight.drained(), drainMs));
    let abandoned = 0;
    if (!drained) {
      for (const ctx of bus.running) ctx.abort(new ShuttingDownError());
      for (const queue of bus.queues.values()) {
        for (const delivery of queue.clear()) {
          abandoned++;
          bus.hooks.delivered?.(
            delivery.target.name,
            'dropped',
            Date.now() - delivery.message.time,
            delivery.thread.id,
          );
          // Not handled: a transport that can redeliver (Redis) gives it to another daemon.
          delivery.abandon(new ShuttingDownError());
        }
      }
      abandoned += bus.running.size;
    }
    await Promise.all([...bus.subscriptions.values()].map((s) => s.unsubscribe()));
    await bus.transport.close();
    return { drained, abandoned };
  }
}

/**
 * Waits for `promise` to settle, but no longer than `ms`: true if it settled in time. What it
 * waits for is left running. Every wait of a shutdown goes through here, so none outlasts its share.
 * Its rejection is handled here even when there is no time left to wait: a shutdown past its
 * deadline goes on to disconnect, which rejects what still waits for Redis (a QUIT among them),
 * and an unhandled rejection ends the process.
 */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const settles = promise.then(
    () => true,
    () => true,
  );
  if (ms <= 0) return false;
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    settles,
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return settled;
}
