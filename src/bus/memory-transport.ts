/**
 * The in-process transport: publish hands the message straight to the target's subscriber, which
 * queues it (the scheduler decides when it runs). Nothing is copied or serialized beyond the plain Message record, which is what keeps a
 * hop cheap; the Redis transport carries the same record between processes.
 */
import type { Message } from './message.ts';
import type { Deliver, Subscription, Transport } from './transport.ts';

export class MemoryTransport implements Transport {
  readonly name = 'memory';
  private readonly subscribers = new Map<string, Deliver>();
  private closed = false;

  async publish(message: Message): Promise<void> {
    if (this.closed) throw new Error('transport closed');
    const deliver = this.subscribers.get(message.to);
    if (!deliver) throw new Error(`no subscriber for ${message.to}`);
    // Not awaited: publish means "accepted", and the subscriber acknowledges by settling.
    deliver(message).catch(() => {});
  }

  subscribe(listener: string, deliver: Deliver): Subscription {
    if (this.closed) throw new Error('transport closed');
    if (this.subscribers.has(listener)) throw new Error(`${listener} already has a subscriber`);
    this.subscribers.set(listener, deliver);
    return {
      unsubscribe: async () => {
        if (this.subscribers.get(listener) === deliver) this.subscribers.delete(listener);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
  }
}
