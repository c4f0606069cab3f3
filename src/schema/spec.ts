/**
 * A payload or response as a module declares it ({ tag, schema } with a JSON Schema or a Standard
 * Schema) -> as the runtime reads it (PayloadSpec: JSON Schema in `schema`, the Standard Schema
 * kept in `standard` for validation). Idempotent, so the loader can run it again on a definition
 * made by another copy of the package.
 */
import type { PayloadSpec } from '../xml/json-schema.ts';
import { jsonSchemaForm } from './json-form.ts';
import { isStandardSchema } from './standard.ts';

export function resolveSpec(
  spec: { tag: string; schema: unknown; standard?: unknown },
  role: 'payload' | 'response',
  where = '',
): PayloadSpec {
  // A malformed spec is the loader's to report, with the module's path.
  if (spec === null || typeof spec !== 'object') return spec as never;
  const schema = spec.schema;
  if (!isStandardSchema(schema)) return spec as PayloadSpec;
  return {
    tag: spec.tag,
    schema: jsonSchemaForm(schema, `${role} <${String(spec.tag)}>${where}`),
    standard: schema,
  };
}
