/**
 * Payload validation with ajv: one shared Ajv (draft 2020-12, formats on) for every listener's
 * payload schema, compiled once per schema object. Errors become PayloadValidationError with a
 * message naming the field path and what was expected, e.g.
 *   <shout> field "count": must be integer (got a string)
 * Messages never echo the offending value (payloads may carry secrets meant for a tool), only its
 * JSON type.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { didYouMean } from '../config/suggest.ts';
import { PayloadValidationError, SchemaError } from '../errors.ts';
import type { JsonSchema } from './json-schema.ts';

export type PayloadValidator = (value: unknown) => PayloadValidationError | null;

let shared: Ajv2020 | null = null;

/** The meta-schema a payload schema without `$schema` is checked against. */
export const DEFAULT_META = 'https://json-schema.org/draft/2020-12/schema';

/** File name of the precompiled meta-schema validator, beside the compiled validate.js in dist/. */
export const PRECOMPILED_META_VALIDATOR = 'payload-meta.validator.cjs';

/** A new Ajv set up for payload schemas; the build's precompiled meta-schema check uses the same. */
export function newPayloadAjv(extra: Options = {}): Ajv2020 {
  // strict: false because listener schemas are user-written and may carry annotations ajv does
  // not know; a schema ajv cannot compile still fails loudly (SchemaError).
  const ajv = new Ajv2020({
    allErrors: false,
    strict: false,
    useDefaults: true,
    allowUnionTypes: true,
    ...extra,
  });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  return ajv;
}

type MetaValidator = ValidateFunction & { ajvVersion?: string };

/**
 * The draft 2020-12 meta-schema check `npm run build` precompiled (bin/precompile-validators.js):
 * ajv otherwise compiles the meta-schema before the first payload schema, ~35 ms and ~4.5 MB of
 * generated code kept by every daemon. Made by the ajv installed at build time; from source or
 * after another ajv was installed, ajv checks schemas itself.
 */
function precompiledMeta(): MetaValidator | undefined {
  const file = fileURLToPath(new URL(`./${PRECOMPILED_META_VALIDATOR}`, import.meta.url));
  if (!existsSync(file)) return undefined;
  // Not kept in the module cache: only metaRef holds it (see metaValidator). A require of its own,
  // which loads nothing else: a module that stays loaded keeps its first parent, with the parent's
  // children, so ajv's package.json loaded from this one would keep the validator too.
  const require = createRequire(import.meta.url);
  const meta = require(file) as MetaValidator;
  delete require.cache[file];
  return meta.ajvVersion === installedAjv() ? meta : undefined;
}

let ajvVersion: string | undefined;
function installedAjv(): string {
  ajvVersion ??= (createRequire(import.meta.url)('ajv/package.json') as { version: string }).version;
  return ajvVersion;
}

/** Whether the shared Ajv was made to leave schema checks to the precompiled validator. */
let hasMeta = false;
/**
 * The precompiled check, held weakly: ~70 KB of code used when payload schemas compile (at start,
 * at a reload), which an idle daemon lets the garbage collector take; it is required again when
 * the next schema compiles.
 */
let metaRef: WeakRef<MetaValidator> | undefined;

function metaValidator(): MetaValidator | undefined {
  let meta = metaRef?.deref();
  if (meta) return meta;
  meta = precompiledMeta();
  if (meta) metaRef = new WeakRef(meta);
  return meta;
}

/** The one Ajv instance for payload schemas. `useDefaults` fills schema defaults into payloads. */
export function payloadAjv(): Ajv2020 {
  if (shared === null) {
    hasMeta = metaValidator() !== undefined;
    shared = newPayloadAjv(hasMeta ? { validateSchema: false } : {});
  }
  return shared;
}

/**
 * What ajv's own schema check does when it compiles (same errors, same message), with the
 * precompiled meta-schema validator for schemas on the default meta-schema.
 */
function checkSchema(ajv: Ajv2020, schema: JsonSchema): void {
  if (!hasMeta) return; // ajv checks as it compiles
  if (schema.$schema !== undefined) {
    ajv.validateSchema(schema, true);
    return;
  }
  const meta = metaValidator();
  // Gone since (dist/ rebuilt with another ajv): ajv's own check, as strict as the precompiled one.
  if (meta === undefined) {
    ajv.validateSchema(schema, true);
    return;
  }
  if (!meta(schema)) throw new Error(`schema is invalid: ${ajv.errorsText(meta.errors)}`);
}

const compiled = new WeakMap<object, ValidateFunction>();

function compile(tag: string, schema: JsonSchema): ValidateFunction {
  let fn = compiled.get(schema);
  if (fn !== undefined) return fn;
  const ajv = payloadAjv();
  try {
    // Two schema objects with the same $id: ajv keeps one; reuse it instead of failing on the second.
    const id = typeof schema.$id === 'string' ? schema.$id : undefined;
    fn = id !== undefined ? ajv.getSchema(id) : undefined;
    if (fn === undefined) {
      checkSchema(ajv, schema);
      fn = ajv.compile(schema);
    }
  } catch (err) {
    throw new SchemaError(tag, err instanceof Error ? err.message : String(err));
  }
  compiled.set(schema, fn);
  return fn;
}

/** How many problems one refusal lists; past it, how many more there were. */
const MAX_LISTED_ERRORS = 20;

/**
 * Compiles (or reuses) the validator for one payload schema. Throws SchemaError if ajv refuses it.
 * A valid payload costs one pass of the first-error validator; a refused one is checked again with
 * every error collected, so the refusal lists every missing or wrong field (MAX_LISTED_ERRORS).
 */
export function compileValidator(tag: string, schema: JsonSchema): PayloadValidator {
  const fn = compile(tag, schema);
  return (value: unknown) => {
    if (fn(value)) return null;
    const errors = everyError(schema, value) ?? fn.errors ?? [];
    const first = errors[0];
    if (first === undefined) return new PayloadValidationError(`<${tag}> payload is invalid`, { tag });
    const problems = describeAll(schema, errors, value);
    const listed = problems.slice(0, MAX_LISTED_ERRORS);
    const more = problems.length - listed.length;
    const path = fieldPath(first);
    return new PayloadValidationError(
      `<${tag}> ${listed.map((p) => p.text).join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
      {
        tag,
        ...(path === '' ? {} : { path }),
        fields: listed.map((p) => ({ path: p.path, message: p.text })),
      },
    );
  };
}

/**
 * Every field's problem once. A missing field is named with the unknown field the sender likely
 * meant for it (`<nam>` for `<name>`); other unknown fields at that place once, after the first
 * missing one: usually the reason fields are missing. Only names the sender itself wrote and the
 * schema's own fields appear.
 */
function describeAll(
  schema: JsonSchema,
  errors: readonly ErrorObject[],
  value: unknown,
): Array<{ path: string; text: string }> {
  // Per place (instance path): the unknown keys, and which of them a missing field likely meant.
  const unknownAt = new Map<string, string[]>();
  const meant = new Map<ErrorObject, string>();
  const claimed = new Set<string>();
  for (const err of errors) {
    if (err.keyword !== 'required') continue;
    const keys = unknownAt.get(err.instancePath) ?? unknownKeys(schema, err, value);
    unknownAt.set(err.instancePath, keys);
    const missing = (err.params as { missingProperty?: unknown }).missingProperty;
    const likely =
      typeof missing === 'string'
        ? keys.find((key) => !claimed.has(`${err.instancePath}/${key}`) && didYouMean(key, [missing]))
        : undefined;
    if (likely !== undefined) {
      meant.set(err, likely);
      claimed.add(`${err.instancePath}/${likely}`);
    }
  }
  const out: Array<{ path: string; text: string }> = [];
  const seen = new Set<string>();
  const told = new Set<string>();
  for (const err of errors) {
    // anyOf/oneOf/if wrappers repeat what their branches said.
    if (err.keyword === 'if' || err.keyword === 'anyOf' || err.keyword === 'oneOf') continue;
    const extra = (err.params as { additionalProperty?: unknown }).additionalProperty;
    // An unknown field already named beside a missing one.
    if (typeof extra === 'string' && unknownAt.get(err.instancePath)?.includes(extra)) continue;
    const path = fieldPath(err);
    let text = describeError(err, path, value);
    if (err.keyword === 'required') {
      const likely = meant.get(err);
      const missing = (err.params as { missingProperty?: unknown }).missingProperty;
      if (likely !== undefined) text += `; unknown field "${likely}": did you mean "${String(missing)}"?`;
      const rest = (unknownAt.get(err.instancePath) ?? []).filter(
        (key) => !claimed.has(`${err.instancePath}/${key}`),
      );
      if (rest.length > 0 && !told.has(err.instancePath)) {
        told.add(err.instancePath);
        text += `; unknown field${rest.length === 1 ? '' : 's'} ${rest.map((key) => `"${key}"`).join(', ')}`;
      }
    }
    if (seen.has(text)) continue;
    seen.add(text);
    out.push({ path, text });
  }
  return out.length > 0 ? out : [{ path: '', text: 'payload is invalid' }];
}

/** Validators with allErrors, compiled only for a schema that refused something. */
const everyErrorCompiled = new WeakMap<object, ValidateFunction | null>();
let everyErrorAjv: Ajv2020 | null = null;

/** Every error `value` has against `schema`, or undefined when that validator cannot be made. */
function everyError(schema: JsonSchema, value: unknown): ErrorObject[] | undefined {
  let fn = everyErrorCompiled.get(schema);
  if (fn === undefined) {
    // The schema passed its check when the first-error validator was compiled.
    everyErrorAjv ??= newPayloadAjv({ allErrors: true, validateSchema: false });
    try {
      const id = typeof schema.$id === 'string' ? schema.$id : undefined;
      fn = (id !== undefined ? everyErrorAjv.getSchema(id) : undefined) ?? everyErrorAjv.compile(schema);
    } catch {
      fn = null;
    }
    everyErrorCompiled.set(schema, fn);
  }
  if (fn === null || fn(value)) return undefined;
  return fn.errors ?? undefined;
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

/** The keys the sender gave where `err` (a missing required field) is that the schema does not name. */
function unknownKeys(schema: JsonSchema, err: ErrorObject, root: unknown): string[] {
  const given = valueAt(root, err.instancePath);
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return [];
  let sub: unknown = schema;
  for (const raw of err.schemaPath.replace(/^#/, '').split('/').slice(1, -1)) {
    if (typeof sub !== 'object' || sub === null) return [];
    sub = (sub as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  const properties = (sub as { properties?: unknown } | null)?.properties;
  if (typeof properties !== 'object' || properties === null) return [];
  const known = Object.keys(properties);
  return Object.keys(given).filter((key) => !known.includes(key));
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
