/**
 * Payload validation with ajv: one shared Ajv (draft 2020-12, formats on) for every listener's
 * payload schema, compiled once per schema object. Errors become PayloadValidationError with a
 * message naming the field path and what was expected, e.g.
 *   <shout> field "count": must be integer (got a string)
 * Messages never echo the offending value (payloads may carry secrets meant for a tool), only its
 * JSON type.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { PayloadValidationError, SchemaError } from '../errors.ts';
import type { JsonSchema } from '../listener/types.ts';

export type PayloadValidator = (value: unknown) => PayloadValidationError | null;

let shared: Ajv2020 | null = null;

/** The one Ajv instance for payload schemas. `useDefaults` fills schema defaults into payloads. */
export function payloadAjv(): Ajv2020 {
  if (shared === null) {
    // strict: false because listener schemas are user-written and may carry annotations ajv does
    // not know; a schema ajv cannot compile still fails loudly (SchemaError).
    shared = new Ajv2020({ allErrors: false, strict: false, useDefaults: true, allowUnionTypes: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(shared);
  }
  return shared;
}

const compiled = new WeakMap<object, ValidateFunction>();

function compile(tag: string, schema: JsonSchema): ValidateFunction {
  let fn = compiled.get(schema);
  if (fn !== undefined) return fn;
  const ajv = payloadAjv();
  try {
    // Two schema objects with the same $id: ajv keeps one; reuse it instead of failing on the second.
    const id = typeof schema.$id === 'string' ? schema.$id : undefined;
    fn = (id !== undefined ? ajv.getSchema(id) : undefined) ?? ajv.compile(schema);
  } catch (err) {
    throw new SchemaError(tag, err instanceof Error ? err.message : String(err));
  }
  compiled.set(schema, fn);
  return fn;
}

/** Compiles (or reuses) the validator for one payload schema. Throws SchemaError if ajv refuses it. */
export function compileValidator(tag: string, schema: JsonSchema): PayloadValidator {
  const fn = compile(tag, schema);
  return (value: unknown) => {
    if (fn(value)) return null;
    const err = fn.errors?.[0];
    if (err === undefined) return new PayloadValidationError(`<${tag}> payload is invalid`, { tag });
    const path = fieldPath(err);
    return new PayloadValidationError(
      `<${tag}> ${describeError(err, path, value)}`,
      path === '' ? { tag } : { tag, path },
    );
  };
}

/** ajv JSON pointer (`/items/0/name`) -> field path (`items[0].name`), including the missing/extra key. */
function fieldPath(err: ErrorObject): string {
  let path = '';
  for (const raw of err.instancePath.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^[0-9]+$/.test(seg) ? `[${seg}]` : path === '' ? seg : `.${seg}`;
  }
  const params = err.params as Record<string, unknown>;
  const key =
    err.keyword === 'required'
      ? params.missingProperty
      : err.keyword === 'additionalProperties'
        ? params.additionalProperty
        : err.keyword === 'unevaluatedProperties'
          ? params.unevaluatedProperty
          : undefined;
  if (typeof key === 'string') path = path === '' ? key : `${path}.${key}`;
  return path;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number';
  return `a ${typeof v}`;
}

function valueAt(root: unknown, pointer: string): unknown {
  let v = root;
  for (const raw of pointer.split('/').slice(1)) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

function describeError(err: ErrorObject, path: string, root: unknown): string {
  const params = err.params as Record<string, unknown>;
  const field = path === '' ? 'payload' : `field "${path}"`;
  switch (err.keyword) {
    case 'required':
      return `missing required field "${path}"`;
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return `unknown field "${path}" (the schema does not allow it)`;
    case 'type':
      return `${field}: must be ${String(params.type)} (got ${jsonType(valueAt(root, err.instancePath))})`;
    case 'enum':
      return `${field}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${field}: must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${field}: ${err.message ?? 'is invalid'}`;
  }
}
