/**
 * Validation against organism.schema.json with ajv (defaults applied in place), and the mapping of
 * each ajv error to a positioned issue that says what was expected and what was found.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ConfigIssue } from '../errors.ts';
import type { JsonSchema } from '../xml/json-schema.ts';
import { organismSchema, WHEN_UNSET } from './schema.ts';
import { type ConfigSource, type KeyPath, pointerToPath } from './source.ts';
import { suggestion } from './suggest.ts';

/** File name of the precompiled validator, beside the compiled validate.js in dist/. */
export const PRECOMPILED_CONFIG_VALIDATOR = 'organism-schema.validator.cjs';

/** What a pattern means, in words, for the patterns the schema uses. */
const PATTERN_WORDS: Record<string, string> = {
  '^[a-z][a-z0-9_-]*$': 'lowercase letters, digits, _ and -, starting with a letter',
  '^[a-z][a-z0-9_]*$': 'lowercase letters, digits and _, starting with a letter',
  '^[A-Za-z_][A-Za-z0-9_]*$': 'the name of an environment variable (letters, digits and _), not its value',
  '^[A-Za-z_][A-Za-z0-9_.-]*$':
    'an XML element name (letters, digits, _, . and -, starting with a letter or _)',
  '^rediss?://': 'a redis:// or rediss:// URL',
  '^https?://': 'an http:// or https:// URL',
  '^[0-9a-f]{64}$': '64 lowercase hex digits',
  '^/': 'an absolute collection path starting with /',
};

let compiled: ValidateFunction | undefined;

/** An ajv set up for organism.schema.json; the build's precompiled validator is made with the same. */
export function configAjv(extra: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    useDefaults: true,
    verbose: true,
    strict: true,
    strictRequired: false,
    ...extra,
  });
  ajv.addVocabulary([WHEN_UNSET]);
  return ajv;
}

/** Identifies the schema a precompiled validator was made from. */
export function configSchemaDigest(): string {
  return createHash('sha256').update(JSON.stringify(organismSchema)).digest('hex');
}

/**
 * The validator `npm run build` wrote beside this module (bin/precompile-validators.js): compiling
 * organism.schema.json costs ~150 ms of every start. Used only when made from the schema as it is
 * now; from source (vitest, tsx) there is none, and the schema compiles here.
 */
function precompiled(): ValidateFunction | undefined {
  const file = fileURLToPath(new URL(`./${PRECOMPILED_CONFIG_VALIDATOR}`, import.meta.url));
  if (!existsSync(file)) return undefined;
  // The module is the validating function, with the digest of its schema as a property.
  const require = createRequire(import.meta.url);
  const validate = require(file) as ValidateFunction & { digest?: string };
  // Not kept in the module cache: only precompiledRef holds it (see schemaValidator).
  delete require.cache[file];
  schemaDigest ??= configSchemaDigest();
  return validate.digest === schemaDigest ? validate : undefined;
}

let schemaDigest: string | undefined;
/**
 * The precompiled validator, held weakly: it is ~260 KB of code (and its bytecode once run) that a
 * daemon needs only at start and at a reload, so an idle daemon lets the garbage collector take it
 * (about 0.6 MB of idle heap, bench/daemon.ts) and the next reload requires it again (a few ms).
 * Validations close together (the test kit's) find it still there.
 */
let precompiledRef: WeakRef<ValidateFunction> | undefined;

/** The compiled validator for organism.schema.json. */
export function schemaValidator(): ValidateFunction {
  let validate = precompiledRef?.deref();
  if (validate) return validate;
  validate = precompiled();
  if (validate) {
    precompiledRef = new WeakRef(validate);
    return validate;
  }
  // From source (or a stale build) ajv compiles the schema: ~150 ms, so that one is kept.
  compiled ??= configAjv().compile(organismSchema);
  return compiled;
}

/** Validates `data` in place (filling defaults) and returns one issue per real problem. */
export function validateAgainstSchema(data: unknown, source: ConfigSource): ConfigIssue[] {
  const validate = schemaValidator();
  if (validate(data)) return [];
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    const issue = toIssue(error, source);
    if (!issue) continue;
    const key = `${issue.line}:${issue.column}:${issue.path}:${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

function toIssue(error: ErrorObject, source: ConfigSource): ConfigIssue | undefined {
  const path = pointerToPath(error.instancePath);
  const params = error.params as Record<string, any>;
  // `if` only says "must match then"; the `then` branch's own error says what is missing. Errors
  // inside propertyNames are reported once by the propertyNames error itself.
  if (error.keyword === 'if' || params.propertyName !== undefined) return undefined;
  const got = shown(error.data, path, source);
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const allowed = Object.keys((error.parentSchema?.properties as object | undefined) ?? {});
      const hint =
        suggestion(key, allowed) || (allowed.length ? `; allowed here: ${allowed.join(', ')}` : '');
      return source.issue([...path, key], `unknown key '${key}'${hint}`, 'key');
    }
    case 'required': {
      const missing = String(params.missingProperty);
      return source.issue(path, `missing required key '${missing}'${condition(error)}`, 'key');
    }
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map(String);
      const hint =
        typeof error.data === 'string' && !source.isInterpolated(path) ? suggestion(error.data, allowed) : '';
      return source.issue(path, `must be one of ${allowed.join(', ')}; got ${got}${hint}`);
    }
    case 'const':
      return source.issue(path, `must be ${JSON.stringify(params.allowedValue)}; got ${got}`);
    case 'type':
      return source.issue(path, `must be ${article(String(params.type))}; got ${got}`);
    case 'pattern': {
      const words = PATTERN_WORDS[String(params.pattern)] ?? `text matching ${params.pattern}`;
      return source.issue(path, `must be ${words}; got ${got}`);
    }
    case 'propertyNames': {
      const name = String(params.propertyName);
      const inner = (error.schema as JsonSchema | undefined)?.pattern;
      const words = typeof inner === 'string' ? (PATTERN_WORDS[inner] ?? `matching ${inner}`) : 'valid';
      return source.issue([...path, name], `key '${name}' is not a valid name here: must be ${words}`, 'key');
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return source.issue(path, `must be ${params.comparison} ${params.limit}; got ${got}`);
    case 'minLength':
      return source.issue(
        path,
        params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters long`,
      );
    case 'minItems':
      return source.issue(
        path,
        `must list at least ${params.limit} item${params.limit === 1 ? '' : 's'}; got ${got}`,
      );
    case 'uniqueItems': {
      const list = error.data as unknown[];
      return source.issue(
        [...path, params.i],
        `${JSON.stringify(list[params.i])} is listed twice (items ${params.j} and ${params.i})`,
      );
    }
    default:
      return source.issue(path, error.message ?? `fails ${error.keyword}`);
  }
}

/**
 * The found value for a message, unless it may be a secret: anything from the environment, and
 * anything under a key naming an environment variable (someone may have pasted the secret itself).
 */
function shown(value: unknown, path: KeyPath, source: ConfigSource): string {
  const last = path[path.length - 1];
  const secretish = typeof last === 'string' && /(_env|password|secret|token|key)$/i.test(last);
  if (secretish || source.isInterpolated(path)) return `a value that is not shown (it may be a secret)`;
  return describe(value);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `'${value.length > 60 ? `${value.slice(0, 57)}...` : value}'`;
  return `${typeof value === 'number' ? 'the number' : typeof value} ${String(value)}`;
}

function article(type: string): string {
  const words: Record<string, string> = {
    object: 'a mapping',
    array: 'a list',
    string: 'a string',
    integer: 'an integer',
    number: 'a number',
    boolean: 'true or false',
    null: 'null',
  };
  return type
    .split(',')
    .map((t) => words[t] ?? t)
    .join(' or ');
}

/** For a `required` inside an if/then: " (needed when provider is anthropic or openai)". */
function condition(error: ErrorObject): string {
  const at = error.schemaPath.lastIndexOf('/then/');
  if (at < 0) return '';
  const parent = resolvePointer(organismSchema, error.schemaPath.slice(1, at));
  const ifProps = ((parent?.if as JsonSchema | undefined)?.properties ?? {}) as Record<string, JsonSchema>;
  const parts = Object.entries(ifProps).map(([key, s]) => {
    const values = 'const' in s ? [s.const] : ((s.enum as unknown[] | undefined) ?? []);
    return `${key} is ${values.map(String).join(' or ')}`;
  });
  return parts.length ? ` (needed when ${parts.join(' and ')})` : '';
}

function resolvePointer(root: JsonSchema, pointer: string): JsonSchema | undefined {
  let here: unknown = root;
  for (const seg of pointer.split('/').filter(Boolean)) {
    if (typeof here !== 'object' || here === null) return undefined;
    here = (here as Record<string, unknown>)[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return here as JsonSchema | undefined;
}
