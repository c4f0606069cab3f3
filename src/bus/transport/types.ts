import type { Message } from '../message.ts';

/**
 * Carries messages between the router and the listeners' schedulers. The in-memory transport hands
 * a message straight to the local consumer; the Redis Streams transport (several daemons) appends
 * to a stream per listener and reads it through a consumer group. Everything above the transport
 * sees only this interface, and one contract suite (test/bus/transport.contract.ts) runs against
 * every implementation.
 */
export interface Transport {
  /** Human-readable name for logs and metrics, e.g. `memory` or `redis`. */
  readonly name: string;
  /**
   * Accept a message for later delivery to `message.to`. Resolves once the message is durable for
   * this transport (in memory: queued; Redis: XADD acknowledged).
   */
  publish(message: Message): Promise<void>;
  /**
   * Start delivering messages addressed to `listener` to `deliver`. The transport considers a
   * message done (acknowledges it) only when the promise returned by `deliver` settles, so a crash
   * mid-handler leaves it to be redelivered where the transport supports that. A rejected promise
   * means "not handled": a transport that can redeliver (Redis) leaves the message unacknowledged,
   * so it is delivered again later (and dead-lettered after too many attempts).
   */
  subscribe(listener: string, deliver: Deliver, options?: SubscribeOptions): Subscription;
  /** Stop delivering and release connections. Pending publishes are flushed first. */
  close(): Promise<void>;
}

/**
 * Hands one message to its listener. The promise settles when the message is done with (handled
 * and its outputs published and confirmed, refused or dropped). `handled`, when the consumer calls
 * it, says the handler has finished earlier than that and its outputs are handed to the transport:
 * only their confirmation is left, so a transport that counts deliveries against maxInFlight may
 * count this one's slot free and read the next messages in the same round trip as those
 * confirmations, and one that keeps its writes in order may acknowledge the message behind them.
 */
export type Deliver = (message: Message, handled?: () => void) => Promise<void>;

export interface SubscribeOptions {
  /**
   * Most messages handed to `deliver` and not yet handled at once (and twice that not yet
   * settled). A transport that fetches work (Redis) reads no more than this, so the listener's
   * bounded queue is never flooded and other daemons get their share; the in-memory transport
   * delivers on publish and ignores it.
   */
  maxInFlight?: number;
  /**
   * The same hand-over as `deliver` for a transport that does not wait for the outcome (the
   * in-memory one without a journal): no promise is made, so a message waiting in a listener's
   * queue costs no promise and no closures. A transport that acknowledges uses `deliver`.
   */
  deliverDetached?: (message: Message) => void;
  /**
   * Whether the listener reads its threads' histories (an agent; default true). A transport that
   * loads each message's thread state as it reads it (Redis) loads the history's length too only
   * when asked: it costs Redis a command a message, and only reading the history needs it. Set
   * at subscribe: a listener a reload turns into an agent keeps its subscription, and each of its
   * deliveries then loads the count on its own (a round trip more) until the daemon restarts.
   */
  readsHistory?: boolean;
}

export interface Subscription {
  /** Stop delivering to this subscriber. In-flight deliveries finish. */
  unsubscribe(): Promise<void>;
}
