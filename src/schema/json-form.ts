/**
 * The JSON Schema form of a Standard Schema. Everything that reads a schema rather than running it
 * (the XML codec, `organism describe`, the XSD, the agents' prompt fragment, MCP and LLM tool
 * definitions) reads JSON Schema; a Standard Schema gets its form once, when its listener or tool
 * is defined, from (in this order):
 *
 * 1. an adapter registered for its vendor (registerJsonSchemaAdapter): for libraries whose schemas
 *    do not convert themselves, or to convert them otherwise;
 * 2. the schema's own converter, the Standard JSON Schema interface (`~standard.jsonSchema`), which
 *    zod 4.2 and later implement: zod works with no setup and no dependency of Organism on zod.
 *
 * A schema with neither is refused with what to do about it.
 */
import { SchemaFormError } from '../errors.ts';
import type { JsonSchema } from '../xml/json-schema.ts';
import { ownJsonSchemaConverter, type StandardSchemaV1, vendorOf } from './standard.ts';

/** Converts the Standard Schemas of one library to JSON Schema. */
export interface JsonSchemaAdapter {
  /** The `~standard.vendor` of the schemas it converts: 'valibot', 'arktype', 'effect', ... */
  readonly vendor: string;
  /** JSON Schema (draft 2020-12) of the values the schema accepts: its input, not its output. */
  toJsonSchema(schema: StandardSchemaV1): JsonSchema;
}

/**
 * Adapters live on globalThis, so one registered through the `organism` a listener module imports
 * is seen by the runtime that loads it even where the two are separate copies of the package.
 */
const ADAPTERS: unique symbol = Symbol.for('organism.json-schema-adapters');
type AdapterHolder = { [ADAPTERS]?: Map<string, JsonSchemaAdapter> };

function adapters(): Map<string, JsonSchemaAdapter> {
  const holder = globalThis as AdapterHolder;
  holder[ADAPTERS] ??= new Map();
  return holder[ADAPTERS];
}

/**
 * Tells Organism how to turn one library's schemas into JSON Schema. Call it before the listeners
 * and tools that use the library are defined (at the top of the module, or in a module they import):
 *
 *   import { toJsonSchema } from '@valibot/to-json-schema';
 *   registerJsonSchemaAdapter({ vendor: 'valibot', toJsonSchema: (schema) => toJsonSchema(schema as never) });
 *
 * A second adapter for the same vendor replaces the first.
 */
export function registerJsonSchemaAdapter(adapter: JsonSchemaAdapter): void {
  if (
    typeof adapter?.vendor !== 'string' ||
    adapter.vendor === '' ||
    typeof adapter.toJsonSchema !== 'function'
  ) {
    throw new TypeError('registerJsonSchemaAdapter needs { vendor: string, toJsonSchema(schema) }');
  }
  adapters().set(adapter.vendor, adapter);
}

/**
 * The JSON Schema of what `schema` accepts. `owner` names its place for the error (`payload <hello>
 * of listener module ...`, `tool word_count's args`). Throws SchemaFormError saying what to do.
 */
export function jsonSchemaForm(schema: StandardSchemaV1, owner: string): JsonSchema {
  const vendor = vendorOf(schema);
  const adapter = adapters().get(vendor);
  const own = ownJsonSchemaConverter(schema);
  if (!adapter && !own) {
    throw new SchemaFormError(
      owner,
      `its ${vendor} schema has no JSON Schema form, which Organism needs for the XML codec, describe, ` +
        'prompts and tool definitions. ' +
        (vendor === 'zod'
          ? 'Use zod 4.2 or later (its schemas convert themselves), or register an adapter: '
          : 'Use a version of the library whose schemas implement ~standard.jsonSchema, or register an adapter: ') +
        `registerJsonSchemaAdapter({ vendor: '${vendor}', toJsonSchema }) from 'organism', before the schema is used`,
    );
  }
  let form: unknown;
  try {
    form = adapter ? adapter.toJsonSchema(schema) : own!.input({ target: 'draft-2020-12' });
  } catch (error) {
    throw new SchemaFormError(
      owner,
      `its ${vendor} schema does not convert to JSON Schema: ${(error as Error)?.message ?? String(error)}. ` +
        'Use only types JSON can carry (no dates, maps, functions or transforms on the input side)',
      { cause: error },
    );
  }
  if (
    typeof form !== 'object' ||
    form === null ||
    Array.isArray(form) ||
    typeof (form as Promise<unknown>).then === 'function'
  ) {
    throw new SchemaFormError(
      owner,
      `the JSON Schema ${adapter ? `the '${vendor}' adapter` : `the ${vendor} schema`} gave is not an object (a synchronous toJsonSchema is needed)`,
    );
  }
  return tidy(structuredClone(form) as JsonSchema);
}

/**
 * What converters add that no reader wants: `$schema` at the top (LLM providers' tool parameters
 * do not take it), and zod's safe-integer bounds on every integer, which would read as a real
 * bound in the agents' prompt fragment and the XSD.
 */
function tidy(schema: JsonSchema): JsonSchema {
  delete schema.$schema;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (record.minimum === -Number.MAX_SAFE_INTEGER) delete record.minimum;
    if (record.maximum === Number.MAX_SAFE_INTEGER) delete record.maximum;
    for (const value of Object.values(record)) walk(value);
  };
  walk(schema);
  return schema;
}
