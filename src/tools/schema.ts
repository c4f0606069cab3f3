/**
 * One ajv instance for tool argument and tool_config schemas, and the wording of its errors. An
 * agent reads these messages to fix its next call, so each names the field and what was expected.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '../xml/json-schema.ts';

let shared: Ajv2020 | undefined;

/**
 * A new ajv set up for tool schemas; the build's precompiled validators are made with the same
 * (plus `extra`: the options standalone code needs).
 */
export function newToolAjv(extra: Options = {}): Ajv2020 {
  // strictSchema catches typos such as `requried` at registration; union types are common in args.
  const ajv = new Ajv2020({
    allErrors: true,
    useDefaults: true,
    strictSchema: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    ...extra,
  });
  addFormats.default(ajv);
  // JSON Schema 2020-12 args ($defs with $anchor, reached by $ref): ajv 8 compiles the referenced
  // subschema on its own and strict mode then calls `$anchor` unknown. It is only a name (anchors
  // resolve as before); declaring it known keeps such schemas registrable, and strict for the rest.
  ajv.addKeyword({ keyword: '$anchor', schemaType: 'string' });
  return ajv;
}

/** Lazily built so importing the runtime costs nothing until a schema is compiled. */
export function toolAjv(): Ajv2020 {
  shared ??= newToolAjv();
  return shared;
}

/** File name of the precompiled validators, beside the compiled schema.js in dist/. */
export const PRECOMPILED_TOOL_VALIDATORS = 'tool-schemas.validators.cjs';

/** What a precompiled validator is found by: the schema's JSON, hashed. */
export function schemaKey(schema: JsonSchema): string {
  return `s${createHash('sha256').update(JSON.stringify(schema)).digest('hex').slice(0, 40)}`;
}

let precompiled: Record<string, ValidateFunction> | undefined;

/**
 * The validators `npm run build` made for Organism's own tools' argument and tool_config schemas
 * (bin/precompile-validators.js): the config schemas of the tools an organism grants are checked at
 * every start, ~30 ms of ajv each. Found by the schema's JSON, so a schema that changed since the
 * build, a user's tool or a run from source compiles as before.
 */
function precompiledValidators(): Record<string, ValidateFunction> {
  if (precompiled) return precompiled;
  const file = fileURLToPath(new URL(`./${PRECOMPILED_TOOL_VALIDATORS}`, import.meta.url));
  precompiled = existsSync(file)
    ? (createRequire(import.meta.url)(file) as Record<string, ValidateFunction>)
    : {};
  return precompiled;
}

export function compileSchema(schema: JsonSchema): ValidateFunction {
  return precompiledValidators()[schemaKey(schema)] ?? toolAjv().compile(schema);
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
