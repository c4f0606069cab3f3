/**
 * Standard Schema (https://standardschema.dev): the interface zod 4, valibot, arktype and others
 * implement under `~standard`. Organism depends only on that interface (the `@standard-schema/spec`
 * package, types only), never on one of the libraries.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';

export type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';

/** True for a value that carries a Standard Schema's `~standard` properties with a `validate`. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return (
    typeof props === 'object' &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === 'function'
  );
}

/** The schema's own JSON Schema converter (the Standard JSON Schema interface), when it has one. */
export function ownJsonSchemaConverter(schema: StandardSchemaV1): StandardJSONSchemaV1.Converter | undefined {
  const converter = (schema['~standard'] as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
  return typeof converter?.input === 'function' ? converter : undefined;
}

/** The library a schema comes from, as it names itself (`zod`, `valibot`, `arktype`). */
export function vendorOf(schema: StandardSchemaV1): string {
  const vendor = schema['~standard'].vendor;
  return typeof vendor === 'string' && vendor !== '' ? vendor : 'unknown';
}
