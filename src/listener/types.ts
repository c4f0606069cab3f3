/**
 * The public surface a listener author programs against. Import from `organism` (src/index.ts),
 * never from internals: everything here is stable API.
 */
import type { AnySchema, Infer } from '../schema/infer.ts';
import { resolveSpec } from '../schema/spec.ts';
import type { StandardSchemaV1 } from '../schema/standard.ts';
import type { ToolCaller } from '../tools/types.ts';
import type { PayloadSpec } from '../xml/json-schema.ts';
import type { ListenerName, PeerOf, PeerPayloadOf, ToolsOf } from './organism-types.ts';

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
 * `R` is the listener's response type: what respond() takes as an object. `N` is the listener's
 * name (defineListener's `name`): with the file `organism types` writes, `tools.call` and `send`
 * accept only that listener's granted tools and peers, with their types; otherwise any name.
 */
export interface HandlerContext<R = Record<string, unknown>, N extends string = string> {
  /** Opaque id of the thread (conversation) this message belongs to. */
  readonly thread: string;
  /** Name of the previous hop (the sender). */
  readonly from: string;
  /** This listener's own name. */
  readonly self: string;
  /** Root tag of the payload being handled. */
  readonly tag: string;
  /** Names this listener may address. */
  readonly peers: readonly PeerOf<N>[];
  /** Usage instructions for the peers, generated from their schemas (for LLM prompts). */
  readonly usage: string;
  /** Aborted when the handler times out or the organism shuts down. */
  readonly signal: AbortSignal;
  readonly log: ListenerLogger;
  /** Calls a granted tool through the dispatcher; refusals come back as results, not exceptions. */
  readonly tools: ToolsOf<N>;
  /** Reply to the caller (the previous hop in the call chain); prunes this hop from the chain. */
  respond(payload: R | string): Outgoing;
  /** Send to a peer by listener name: its payload as an object, or XML text. */
  send<P extends PeerOf<N>>(to: P, payload: PeerPayloadOf<N, P>): Outgoing;
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

export type Handler<T, R = Record<string, unknown>, N extends string = string> = (
  payload: T,
  ctx: HandlerContext<R, N>,
) => HandlerResult | Promise<HandlerResult>;
export type ReplyHandler<R = Record<string, unknown>, N extends string = string> = (
  reply: IncomingReply,
  ctx: HandlerContext<R, N>,
) => HandlerResult | Promise<HandlerResult>;

/**
 * A listener as defineListener returns it (and as the runtime reads it): its payload and response
 * with their schemas in JSON Schema form (a Standard Schema kept beside it, for validation).
 * `T` is what the handler receives, `R` what respond() takes, `N` the listener's name, `In` what a
 * sender gives (a schema's input type; `organism types` reads it for peers). `R` defaults to
 * `object`, not `Record<string, unknown>`, so a definition whose response type is an interface (no
 * index signature) is still a `ListenerDefinition` where one is taken (testListener, peers).
 */
export interface ListenerDefinition<
  T = Record<string, unknown>,
  R = object,
  N extends string = string,
  In = T,
> {
  /**
   * The organism.yaml listener this module is (optional). With it, the file `organism types`
   * writes types ctx.tools.call and ctx.send by that listener's grants and peers, and the loader
   * refuses an organism.yaml entry of another name that uses this module.
   */
  name?: N;
  /** One line saying what the listener does; organism.yaml may override it. */
  description?: string;
  /** What the listener accepts. */
  payload: PayloadSpec;
  /** What respond() sends when given an object. Optional; XML-text responses need none. */
  response?: PayloadSpec;
  /** Called for each message carrying `payload.tag`, already validated against its schema. */
  handler(payload: T, ctx: HandlerContext<R, N>): HandlerResult | Promise<HandlerResult>;
  /**
   * Called for everything else addressed to this listener: replies from peers, `<huh>` and
   * `<SystemError>`. Without it such messages are recorded in the thread and go no further.
   */
  onReply?(reply: IncomingReply, ctx: HandlerContext<R, N>): HandlerResult | Promise<HandlerResult>;
  /** Types only, never set: what a sender gives this listener. */
  readonly '~input'?: In;
}

/** A payload or response as a module declares it: its root tag and a JSON Schema or Standard Schema. */
export interface SchemaSpec<S extends AnySchema = AnySchema> {
  /** Root element local name, e.g. `greeting`. Routing is by this tag. */
  tag: string;
  /**
   * Shape of the payload; child elements map to properties. A JSON Schema (its type is inferred
   * when written inline or `as const`), or any Standard Schema with a JSON Schema form (zod 4.2+
   * as it is; others through registerJsonSchemaAdapter).
   */
  schema: S;
}

/** What defineListener takes: a ListenerDefinition whose schemas may be Standard Schemas. */
export interface ListenerInput<T, R, N extends string, P extends AnySchema, Q extends AnySchema> {
  /**
   * See ListenerDefinition.name. One organism.yaml declares, once `organism types` has run (the
   * conditional keeps N inferred from what is written, so a misspelling is reported against the
   * names; left out, N stays `string` and the listener's ctx is loose).
   */
  name?: N extends ListenerName ? N : ListenerName;
  description?: string;
  payload: SchemaSpec<P>;
  response?: SchemaSpec<Q>;
  handler(payload: T, ctx: HandlerContext<R, N>): HandlerResult | Promise<HandlerResult>;
  onReply?(reply: IncomingReply, ctx: HandlerContext<R, N>): HandlerResult | Promise<HandlerResult>;
}

declare const INFERRED: unique symbol;
/** The default of defineListener's `T` and `R`: take the type from the schema. */
type Inferred = typeof INFERRED;

/** respond()'s type from the response schema; no response schema: any object, as before. */
type ResponseOf<Q> = AnySchema extends Q ? Record<string, unknown> : Infer<Q, 'in'>;

/**
 * Declares a listener module. The default export of a listener module must be the returned value.
 *
 * The payload's and response's types come from their schemas: a zod (or other Standard Schema)
 * schema's own types, or a JSON Schema written inline (or `as const`). The handler receives the
 * payload after validation (a Standard Schema's output); respond() takes the response's input.
 * Types can also be given: `defineListener<Greeting, Shout>(...)`, interfaces as well as aliases.
 *
 * `name` ties the module to its organism.yaml entry, for `organism types` (see ListenerDefinition).
 * A Standard Schema without a JSON Schema form throws SchemaFormError (code schema.no_json_form).
 */
export function defineListener<
  T = Inferred,
  R = Inferred,
  const N extends string = string,
  const P extends AnySchema = AnySchema,
  const Q extends AnySchema = AnySchema,
>(
  definition: ListenerInput<
    [T] extends [Inferred] ? Infer<P> : T,
    [R] extends [Inferred] ? ResponseOf<Q> : R,
    N,
    P,
    Q
  >,
): ListenerDefinition<
  [T] extends [Inferred] ? Infer<P> : T,
  [R] extends [Inferred] ? ResponseOf<Q> : R,
  N,
  [T] extends [Inferred] ? Infer<P, 'in'> : T
> {
  const where = definition.name === undefined ? '' : ` of listener ${definition.name}`;
  const payload = resolveSpec(definition.payload, 'payload', where);
  const response =
    definition.response === undefined ? undefined : resolveSpec(definition.response, 'response', where);
  return Object.freeze({
    ...definition,
    payload,
    ...(response === undefined ? {} : { response }),
    [LISTENER_BRAND]: true,
  }) as never;
}

/** Marks objects made by defineListener so the loader can tell them from arbitrary default exports. */
export const LISTENER_BRAND: unique symbol = Symbol.for('organism.listener');

export function isListenerDefinition(value: unknown): value is ListenerDefinition<unknown> {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[LISTENER_BRAND] === true
  );
}

/** Any listener definition, whatever its types: what the test kit and the runtime accept. */
export type AnyListenerDefinition = ListenerDefinition<any, any, any, any>;

export type { AnySchema, StandardSchemaV1, ToolCaller };
