/**
 * A server's inputSchema as the runtime checks arguments against it. The server's words are not
 * trusted: a `pattern` or `patternProperties` runs a regular expression the server chose on text
 * an agent wrote, and a backtracking one (`^(a+)+$`) could hold the daemon's event loop for
 * minutes. So those are left to the server to check; every other keyword is checked here.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

// `dependencies` too: Ajv2020 still runs its schema form (draft 7), where a pattern hid from us.
const MAPS = ['properties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];
const ONE = [
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
];
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];

/** A copy of `schema` without regular expressions of the server's (see above). */
export function withoutPatterns(schema: unknown, depth = 0): unknown {
  if (!isNode(schema) || depth > 64) return schema;
  const out: Node = { ...schema };
  if (typeof out.pattern === 'string') delete out.pattern;
  if ('patternProperties' in out) {
    delete out.patternProperties;
    // Names the patterns allowed must not now be refused as additional.
    delete out.additionalProperties;
  }
  for (const key of MAPS) {
    const map = out[key];
    if (isNode(map))
      out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, withoutPatterns(v, depth + 1)]));
  }
  for (const key of ONE) if (isNode(out[key])) out[key] = withoutPatterns(out[key], depth + 1);
  for (const key of MANY) {
    const list = out[key];
    if (Array.isArray(list)) out[key] = list.map((v) => withoutPatterns(v, depth + 1));
  }
  return out;
}

let lenient: Ajv2020 | undefined;

/** Servers write schemas for many drafts and with their own keywords: checked, not policed. */
export function compileRemote(schema: Record<string, unknown>): ValidateFunction {
  if (!lenient) {
    lenient = new Ajv2020({ allErrors: true, strict: false, validateFormats: true, allowUnionTypes: true });
    addFormats.default(lenient);
  }
  const { $schema: _draft, $id: _id, ...rest } = withoutPatterns(schema) as Node;
  return lenient.compile({ ...rest, type: 'object' });
}
