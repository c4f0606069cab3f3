/**
 * Types from schemas, at compile time only: a Standard Schema's through its `~standard.types`, a
 * JSON Schema literal's (written inline, or `as const` in a variable) through the mapping below.
 *
 * The mapping is hand-written rather than json-schema-to-ts: it covers what payload and argument
 * schemas are made of (type, properties, required, items, enum, const, anyOf/oneOf/allOf, nullable
 * type lists, default), adds nothing to a user's install (a types-only need would otherwise ship
 * @babel/runtime and ts-algebra to every project), and yields plain object types, so an error about
 * a payload reads `Property 'name' is missing in type ...`. Not followed: `$ref` (unknown),
 * `patternProperties`, tuples (`prefixItems`: unknown[]), `not`, `if/then/else`. An object's extra
 * properties that the schema merely allows are not in the type (it is closed, so a misspelled key
 * in an object literal is an error); `additionalProperties: <schema>` adds an index signature.
 */
import type { JsonSchema } from '../xml/json-schema.ts';
import type { StandardSchemaV1 } from './standard.ts';

/** What a payload, response or tool's arguments may be declared with. */
export type AnySchema = JsonSchema | StandardSchemaV1;

/** `in`: what a sender may give (defaults optional). `out`: what the receiver gets after validation (defaults filled). */
export type SchemaMode = 'in' | 'out';

/** The type a schema describes: a Standard Schema's output or input, or a JSON Schema literal's. */
export type Infer<S, M extends SchemaMode = 'out'> = S extends StandardSchemaV1
  ? M extends 'out'
    ? StandardSchemaV1.InferOutput<S>
    : StandardSchemaV1.InferInput<S>
  : JsonObjectType<S, M>;

/**
 * A payload's or arguments' type from a JSON Schema: an object type for an object schema written
 * as a literal; `Record<string, unknown>` for a schema typed only as JSON Schema (built at run time,
 * or annotated `JsonSchema`), as before types were inferred.
 */
export type JsonObjectType<S, M extends SchemaMode = 'out'> =
  IsWide<S> extends true
    ? Record<string, unknown>
    : FromJsonSchema<S, M> extends infer T
      ? unknown extends T
        ? Record<string, unknown>
        : T
      : never;

/** A schema whose keys or type are not known at compile time (an index signature, a `string` type). */
type IsWide<S> = S extends object ? (string extends keyof S ? true : false) : true;

/** Depth guard: nesting past it is `unknown` rather than a compiler error. */
type Prev = [never, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

export type FromJsonSchema<S, M extends SchemaMode = 'out', D extends number = 12> = [D] extends [never]
  ? unknown
  : S extends true
    ? unknown
    : S extends { readonly const: infer C }
      ? Mutable<C>
      : S extends { readonly enum: readonly (infer E)[] }
        ? Mutable<E>
        : S extends { readonly anyOf: readonly unknown[] }
          ? UnionOf<S['anyOf'], M, Prev[D]>
          : S extends { readonly oneOf: readonly unknown[] }
            ? UnionOf<S['oneOf'], M, Prev[D]>
            : S extends { readonly allOf: readonly unknown[] }
              ? IntersectionOf<S['allOf'], M, Prev[D]>
              : S extends { readonly type: infer T }
                ? T extends readonly (infer U)[]
                  ? ByType<U, S, M, Prev[D]>
                  : ByType<T, S, M, Prev[D]>
                : S extends { readonly properties: object }
                  ? ObjectOf<S, M, Prev[D]>
                  : unknown;

type ByType<T, S, M extends SchemaMode, D extends number> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? S extends { readonly items: infer I }
            ? I extends boolean
              ? unknown[]
              : FromJsonSchema<I, M, D>[]
            : unknown[]
          : T extends 'object'
            ? ObjectOf<S, M, D>
            : unknown;

type UnionOf<L, M extends SchemaMode, D extends number> = L extends readonly [infer H, ...infer R]
  ? FromJsonSchema<H, M, D> | UnionOf<R, M, D>
  : L extends readonly (infer E)[]
    ? FromJsonSchema<E, M, D>
    : never;

type IntersectionOf<L, M extends SchemaMode, D extends number> = L extends readonly [infer H, ...infer R]
  ? FromJsonSchema<H, M, D> & IntersectionOf<R, M, D>
  : unknown;

type RequiredKeys<S> = S extends { readonly required: readonly (infer K)[] } ? K & string : never;

/** Keys present after validation: required ones, and (out) those the schema gives a default. */
type PresentKeys<S, P, M extends SchemaMode> =
  | RequiredKeys<S>
  | (M extends 'out'
      ? { [K in keyof P]: P[K] extends { readonly default: unknown } ? K : never }[keyof P]
      : never);

type ObjectOf<S, M extends SchemaMode, D extends number> = S extends { readonly properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P & PresentKeys<S, P, M>]: FromJsonSchema<P[K], M, D> } & {
        -readonly [K in Exclude<keyof P, PresentKeys<S, P, M>>]?: FromJsonSchema<P[K], M, D>;
      } & Additional<S, M, D>
    >
  : S extends { readonly additionalProperties: object }
    ? Additional<S, M, D>
    : Record<string, unknown>;

type Additional<S, M extends SchemaMode, D extends number> = S extends {
  readonly additionalProperties: infer A;
}
  ? A extends object
    ? { [key: string]: FromJsonSchema<A, M, D> }
    : unknown
  : unknown;

/** Literal types from `as const` (readonly tuples and objects) as the mutable values a handler works with. */
type Mutable<T> = T extends readonly (infer E)[]
  ? Mutable<E>[]
  : T extends object
    ? { -readonly [K in keyof T]: Mutable<T[K]> }
    : T;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
