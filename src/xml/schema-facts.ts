/**
 * What a payload's JSON Schema says at one position, read the way the codec reads it (codec.ts):
 * the types it allows, its properties, which are required. Shared by the XSD, the example and the
 * prompt fragment (describe.ts, xsd.ts, constraints.ts).
 */
import type { JsonSchema } from './json-schema.ts';

export type Schema = JsonSchema;

export function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON types a value may have here: `type`, else what `properties`, `items`, `enum` or `const` imply. */
export function typesOf(s: Schema): string[] {
  const t = s.type;
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  if (isSchema(s.properties)) return ['object'];
  if (s.items !== undefined) return ['array'];
  const values = Array.isArray(s.enum) ? s.enum : 'const' in s ? [s.const] : [];
  const inferred = new Set<string>();
  for (const v of values) {
    if (v === null) inferred.add('null');
    else if (Array.isArray(v)) inferred.add('array');
    else if (typeof v === 'number') inferred.add(Number.isInteger(v) ? 'integer' : 'number');
    else inferred.add(typeof v);
  }
  return [...inferred];
}

/** The main type: the first non-null one. */
export function mainType(s: Schema): string | undefined {
  const types = typesOf(s);
  return types.find((t) => t !== 'null') ?? types[0];
}

export function properties(s: Schema): [string, Schema][] {
  if (!isSchema(s.properties)) return [];
  return Object.entries(s.properties).map(([k, v]) => [k, isSchema(v) ? v : {}]);
}

export function requiredSet(s: Schema): Set<string> {
  return new Set(
    Array.isArray(s.required) ? s.required.filter((x): x is string => typeof x === 'string') : [],
  );
}

export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * A numeric bound as the schema's author meant it: zod writes the safe-integer limits
 * (±9007199254740991) as the bounds of every `z.int()`, which no author wrote and which JSON
 * numbers past them cannot be read exactly anyway, so they are no constraint to tell anyone.
 */
export function bound(s: Schema, keyword: string): number | undefined {
  const v = num(s[keyword]);
  return v === undefined || Math.abs(v) === Number.MAX_SAFE_INTEGER ? undefined : v;
}

/** The values `enum` or `const` allow, or undefined when neither is given. */
export function allowedValues(s: Schema): unknown[] | undefined {
  if (Array.isArray(s.enum)) return s.enum;
  if ('const' in s) return [s.const];
  return undefined;
}
