/**
 * The public surface a listener author programs against. Import from `organism` (src/index.ts),
 * never from internals: everything here is stable API.
 */
import type { ToolCaller } from '../tools/types.ts';
import type { PayloadSpec } from '../xml/json-schema.ts';

export type { JsonSchema, PayloadSpec } from '../xml/json-schema.ts';

/**
 * A payload a handler emits: either an object (serialized by the target's schema under the target's
 * tag, or under the listener's own `response` tag for respond()), or XML text with one or more root
 * elements. XML text is repaired if dirty (prose around it, unclosed tags).
 */
export type PayloadInput = string | Record<string, unknown>;

/** One thing a handler asks the runtime to do with its output. Build these with ctx.respond / ctx.send. */
export type Outgoing =
  | { readonly kind: 'respond'; readonly payload: PayloadInput }
  | { readonly kind: 'send'; readonly to: string; readonly payload: PayloadInput }
  | { readonly kind: 'emit'; readonly payload: string };

/** What a handler may return: one outgoing message, several, XML text to route by tag, or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: `void` lets a handler with a statement body (no return) type-check.
export type HandlerResult = Outgoing | readonly Outgoing[] | string | undefined | null | void;

export interface ListenerLogger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * Context handed to a handler with each message. Identity fields come from the runtime's own state.
 * `R` is the listener's response type (defineListener's second type argument): what respond() takes
 * as an object.
 */
export interface HandlerContext<R = Record<string, unknown>> {
  /** Opaque id of the thread (conversation) this message belongs to. */
  readonly thread: string;
  /** Name of the previous hop (the sender). */
  readonly from: string;
  /** This listener's own name. */
  readonly self: string;
  /** Root tag of the payload being handled. */
  readonly tag: string;
  /** Names this listener may address. */
  readonly peers: readonly string[];
  /** Usage instructions for the peers, generated from their schemas (for LLM prompts). */
  readonly usage: string;
  /** Aborted when the handler times out or the organism shuts down. */
  readonly signal: AbortSignal;
  readonly log: ListenerLogger;
  /** Calls a granted tool through the dispatcher; refusals come back as results, not exceptions. */
  readonly tools: ToolCaller;
  /** Reply to the caller (the previous hop in the call chain); prunes this hop from the chain. */
  respond(payload: R | string): Outgoing;
  /** Send to a peer by listener name. */
  send(to: string, payload: PayloadInput): Outgoing;
}

/** A message that is not the listener's own payload: replies, `<huh>`, `<SystemError>`. */
export interface IncomingReply {
  tag: string;
  kind: 'response' | 'huh' | 'system-error';
  /** Decoded fields (by the schema registered for the tag where there is one). */
  payload: Record<string, unknown>;
  /** The payload as XML text. */
  xml: string;
}

export type Handler<T, R = Record<string, unknown>> = (
  payload: T,
  ctx: HandlerContext<R>,
) => HandlerResult | Promise<HandlerResult>;
export type ReplyHandler = (
  reply: IncomingReply,
  ctx: HandlerContext,
) => HandlerResult | Promise<HandlerResult>;

export interface ListenerDefinition<T = Record<string, unknown>, R = Record<string, unknown>> {
  /** One line saying what the listener does; organism.yaml may override it. */
  description?: string;
  /** What the listener accepts. */
  payload: PayloadSpec;
  /** What respond() sends when given an object. Optional; XML-text responses need none. */
  response?: PayloadSpec;
  /** Called for each message carrying `payload.tag`, already validated against its schema. */
  handler: Handler<T, R>;
  /**
   * Called for everything else addressed to this listener: replies from peers, `<huh>` and
   * `<SystemError>`. Without it such messages are recorded in the thread and go no further.
   */
  onReply?: ReplyHandler;
}

/**
 * Declares a listener module. The default export of a listener module must be the returned value.
 * `T` is the payload's type, `R` the response's: `defineListener<Greeting, Shout>(...)` makes
 * `ctx.respond({...})` check its object against `Shout`.
 */
export function defineListener<T = Record<string, unknown>, R = Record<string, unknown>>(
  definition: ListenerDefinition<T, R>,
): ListenerDefinition<T, R> {
  return Object.freeze({ ...definition, [LISTENER_BRAND]: true }) as ListenerDefinition<T, R>;
}

/** Marks objects made by defineListener so the loader can tell them from arbitrary default exports. */
export const LISTENER_BRAND: unique symbol = Symbol.for('organism.listener');

export function isListenerDefinition(value: unknown): value is ListenerDefinition<unknown> {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[LISTENER_BRAND] === true
  );
}
