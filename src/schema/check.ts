/**
 * Validation by a Standard Schema: its own `~standard.validate`, sync or async, never ajv on its
 * JSON Schema form (that form only describes). What the schema gives back (its output: defaults
 * filled, unknown keys stripped, transforms applied) is what the handler or the tool receives.
 * Issues read like ajv's: `field "items[0].name": <the library's message>`, every issue listed.
 */
import { PayloadValidationError } from '../errors.ts';
import type { StandardSchemaV1 } from './standard.ts';

/** The schema's verdict: the value it produced, or its issues as one line. */
export type StandardVerdict =
  | { readonly value: unknown }
  | { readonly issues: string; readonly path?: string };

/** Runs the schema; settles synchronously when the schema does. A throwing schema counts as a refusal. */
export function runStandard(
  schema: StandardSchemaV1,
  value: unknown,
): StandardVerdict | Promise<StandardVerdict> {
  let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
  try {
    result = schema['~standard'].validate(value);
  } catch (error) {
    return thrown(error);
  }
  if (result instanceof Promise) return result.then(verdictOf, thrown);
  return verdictOf(result);
}

function verdictOf(result: StandardSchemaV1.Result<unknown>): StandardVerdict {
  if (!result.issues) return { value: result.value };
  if (result.issues.length === 0) return { issues: 'is invalid' };
  const first = pathText(result.issues[0]!.path);
  return {
    issues: result.issues.map((issue) => issueText(issue)).join('; '),
    ...(first === '' ? {} : { path: first }),
  };
}

function thrown(error: unknown): StandardVerdict {
  return { issues: `the schema failed: ${(error as Error)?.message ?? String(error)}` };
}

function issueText(issue: StandardSchemaV1.Issue): string {
  const path = pathText(issue.path);
  return `${path === '' ? 'payload' : `field "${path}"`}: ${issue.message}`;
}

/** `['items', 0, 'name']` (or `{ key }` segments) -> `items[0].name`. */
export function pathText(path: StandardSchemaV1.Issue['path']): string {
  let out = '';
  for (const segment of path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    const text = typeof key === 'symbol' ? key.toString() : String(key);
    out += typeof key === 'number' || /^[0-9]+$/.test(text) ? `[${text}]` : out === '' ? text : `.${text}`;
  }
  return out;
}

/**
 * What a payload check says: null (valid as given; a JSON Schema's defaults are filled in place),
 * `{ value }` (valid, and this is what the handler gets: a Standard Schema's output), or the error.
 */
export type PayloadVerdict = PayloadValidationError | null | { readonly value: unknown };
export type PayloadCheck = (value: unknown) => PayloadVerdict | Promise<PayloadVerdict>;

/** The payload check of a listener whose schema is a Standard Schema. */
export function standardPayloadCheck(tag: string, schema: StandardSchemaV1): PayloadCheck {
  const settle = (verdict: StandardVerdict): PayloadVerdict =>
    'value' in verdict
      ? verdict
      : new PayloadValidationError(
          `<${tag}> ${verdict.issues}`,
          verdict.path === undefined ? { tag } : { tag, path: verdict.path },
        );
  return (value) => {
    const verdict = runStandard(schema, value);
    return verdict instanceof Promise ? verdict.then(settle) : settle(verdict);
  };
}
