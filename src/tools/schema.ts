/**
 * One ajv instance for tool argument and tool_config schemas, and the wording of its errors. An
 * agent reads these messages to fix its next call, so each names the field and what was expected.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '../xml/json-schema.ts';

let shared: Ajv2020 | undefined;

/** Lazily built so importing the runtime costs nothing until a schema is compiled. */
export function toolAjv(): Ajv2020 {
  if (shared) return shared;
  // strictSchema catches typos such as `requried` at registration; union types are common in args.
  const ajv = new Ajv2020({
    allErrors: true,
    useDefaults: true,
    strictSchema: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
  });
  addFormats.default(ajv);
  shared = ajv;
  return ajv;
}

export function compileSchema(schema: JsonSchema): ValidateFunction {
  return toolAjv().compile(schema);
}

/** Path in dotted/bracket form: `/a/0/b` -> `a[0].b`. */
export function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

function join(base: string, key: string): string {
  if (base === '') return key;
  return /^\d+$/.test(key) ? `${base}[${key}]` : `${base}.${key}`;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

/** The value at a JSON pointer inside `root` (ajv reports where, not what, unless verbose). */
function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const raw of pointer.split('/').slice(1)) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return value;
}

/** One error as `{ path, message }`, path relative to the validated object `root`. */
export function describeError(error: ErrorObject, root?: unknown): { path: string; message: string } {
  const at = pointerToPath(error.instancePath);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: join(at, String(p.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { path: join(at, String(p.additionalProperty)), message: 'is not a known key' };
    case 'type':
      return {
        path: at,
        message: `must be ${String(p.type)} (got ${typeOf(valueAt(root, error.instancePath))})`,
      };
    case 'enum':
      return {
        path: at,
        message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'const':
      return { path: at, message: `must be ${JSON.stringify(p.allowedValue)}` };
    default:
      return { path: at, message: error.message ?? `fails ${error.keyword}` };
  }
}

/**
 * Human wording for an argument-validation failure, e.g.
 * `argument 'expression' is required; argument 'precision' must be integer (got string)`.
 */
export function formatArgErrors(
  errors: readonly ErrorObject[] | null | undefined,
  root: unknown,
  allowed?: string[],
): string {
  if (!errors || errors.length === 0) return 'arguments are invalid';
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const error of errors) {
    // allErrors reports each failing branch of an anyOf/oneOf; the summary keyword says enough.
    const { path, message } = describeError(error, root);
    let text = path === '' ? `arguments ${message}` : `argument '${path}' ${message}`;
    if (
      error.keyword === 'additionalProperties' &&
      allowed &&
      allowed.length > 0 &&
      error.instancePath === ''
    ) {
      text += ` (expected one of: ${allowed.join(', ')})`;
    }
    if (!seen.has(text)) {
      seen.add(text);
      parts.push(text);
    }
  }
  return parts.join('; ');
}
