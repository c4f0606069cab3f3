/**
 * The schema types every layer shares: a JSON Schema, and a payload's tag with its schema. A leaf
 * module (it imports types only), so config/, xml/, tools/, agent/ and listener/ can all depend on
 * it without an import cycle. Listener authors get both from `organism` (src/index.ts).
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';

/** A JSON Schema (draft 2020-12 subset understood by ajv). */
export type JsonSchema = { [keyword: string]: unknown };

/** The XML element a listener accepts: its root tag and the JSON Schema of its fields. */
export interface PayloadSpec {
  /** Root element local name, e.g. `greeting`. Routing is by this tag. */
  tag: string;
  /** Shape of the payload; child elements map to properties. Always JSON Schema here. */
  schema: JsonSchema;
  /**
   * The Standard Schema (zod, valibot...) the module declared, whose JSON Schema form `schema` is:
   * payloads are validated by it (its `~standard.validate`), not by ajv.
   */
  standard?: StandardSchemaV1;
}
