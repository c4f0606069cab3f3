/**
 * What `organism types` tells the compiler about one organism: for each listener of organism.yaml,
 * the tools it is granted (argument and result types) and the peers it may address (payload
 * types). The generated file (organism-env.d.ts) fills `OrganismTypes` by declaration merging:
 *
 *   declare module 'organism' {
 *     interface OrganismTypes {
 *       listeners: { hello: { tools: { word_count: { args: {...}; result: {...} } }; peers: {...} } };
 *     }
 *   }
 *
 * A listener module says which listener it is with `defineListener({ name: 'hello', ... })`; its
 * `ctx.tools.call` and `ctx.send` then accept only that listener's tools and peers. Without the
 * generated file, or without `name`, both stay as loose as they always were (any string).
 */
import type { ToolCaller, ToolResult } from '../tools/types.ts';

/** Empty here; the file `organism types` writes merges the organism's listeners into it. */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in the generated file.
export interface OrganismTypes {}

/** One tool as a listener calls it: what it takes, what an ok result's value is. */
export interface ToolTypes {
  args: unknown;
  result: unknown;
}

/** One listener's grants and peers, as `organism types` writes them. */
export interface ListenerTypes {
  tools: { [tool: string]: ToolTypes };
  /** Each peer's payload, as a sender gives it (an object; XML text is always accepted too). */
  peers: { [peer: string]: unknown };
}

type Listeners = OrganismTypes extends { listeners: infer L } ? L : Record<never, never>;

/** The listener names organism.yaml declares, once `organism types` has run; any string before. */
export type ListenerName = [keyof Listeners] extends [never] ? string : keyof Listeners & string;

/** One listener's entry, or undefined where types are loose (no generated file, no single name). */
type EntryOf<N extends string> = [N] extends [never]
  ? undefined
  : string extends N
    ? undefined
    : IsUnion<N> extends true
      ? undefined
      : N extends keyof Listeners
        ? Listeners[N]
        : undefined;

type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;

/** `ctx.tools.call` that accepts only the tools in `T`, each with its own argument and result types. */
export interface TypedToolCaller<T> {
  /** See ToolCaller.call; `name` is one of this listener's granted tools. */
  call<K extends keyof T & string>(
    name: K,
    args: T[K] extends { args: infer A } ? A : unknown,
    key?: string,
  ): Promise<ToolResult<T[K] extends { result: infer V } ? V : unknown>>;
}

/** ctx.tools of listener `N`: typed by its grants where `organism types` knows them. */
export type ToolsOf<N extends string> =
  EntryOf<N> extends { tools: infer T } ? TypedToolCaller<T> : ToolCaller;

/** The names listener `N` may send to (any string where types are loose). */
export type PeerOf<N extends string> = EntryOf<N> extends { peers: infer P } ? keyof P & string : string;

/** What ctx.send takes for peer `P` of listener `N`: its payload object, or XML text. */
export type PeerPayloadOf<N extends string, P extends string> =
  EntryOf<N> extends { peers: infer Ps }
    ? P extends keyof Ps
      ? Ps[P] | string
      : string
    : string | Record<string, unknown>;

/** What a caller gives a tool (its args schema's input type), from its definition's type. */
export type ToolArgsOf<D> = D extends { readonly '~input'?: infer I }
  ? Exclude<I, undefined>
  : Record<string, unknown>;

/** What a tool's run resolves to, from its definition's type. */
export type ToolResultOf<D> = D extends { run(...args: never[]): Promise<infer R> } ? R : unknown;
