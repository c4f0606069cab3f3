/**
 * Every constraint a payload schema puts on one value, in words an LLM follows ("at least 1",
 * "must match the regular expression ^[0-9]{5}$"). The prompt fragment shows them beside each
 * field, and the XSD's documentation repeats them, also for what no XSD facet can say. The type
 * itself, `enum`, `const`, `required` and the fields' names are said by the callers.
 *
 * Every assertion keyword ajv enforces on a payload (draft 2020-12 and ajv-formats' format limits)
 * is said here; ASSERTIONS lists them, and a test checks each one shows.
 */
import { bound, isSchema, mainType, num, type Schema } from './schema-facts.ts';

/** The keywords said here (with `type`, `enum`, `const`, `required`, `properties`, `items` said by callers). */
export const ASSERTIONS = [
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'formatMinimum',
  'formatMaximum',
  'formatExclusiveMinimum',
  'formatExclusiveMaximum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'prefixItems',
  'unevaluatedItems',
  'minProperties',
  'maxProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'patternProperties',
  'propertyNames',
  'dependentRequired',
  'dependentSchemas',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
] as const;

/** What each format ajv-formats checks means, with an example an LLM can copy the shape of. */
export const FORMAT_WORDS: Record<string, string> = {
  date: 'a date, YYYY-MM-DD, e.g. 2024-05-01',
  time: 'a time with a time zone, e.g. 12:00:00Z or 12:00:00+02:00',
  'date-time': 'a date and time with a time zone (RFC 3339), e.g. 2024-05-01T12:00:00Z',
  'iso-time': 'a time, the time zone optional, e.g. 12:00:00',
  'iso-date-time': 'a date and time, the time zone optional, e.g. 2024-05-01T12:00:00',
  duration: 'an ISO 8601 duration, e.g. P1DT2H or P3W',
  uri: 'an absolute URI with a scheme, e.g. https://example.com/a',
  'uri-reference': 'a URI or a relative reference, e.g. /a/b?c',
  'uri-template': 'a URI template (RFC 6570), e.g. /users/{id}',
  url: 'an http, https or ftp URL, e.g. https://example.com/',
  email: 'an email address, e.g. ada@example.com',
  hostname: 'a host name, e.g. example.com',
  ipv4: 'an IPv4 address, e.g. 192.0.2.1',
  ipv6: 'an IPv6 address, e.g. 2001:db8::1',
  regex: 'a regular expression',
  uuid: 'a UUID, e.g. 123e4567-e89b-42d3-a456-426614174000',
  'json-pointer': 'a JSON pointer, e.g. /a/0',
  'json-pointer-uri-fragment': 'a JSON pointer as a URI fragment, e.g. #/a/0',
  'relative-json-pointer': 'a relative JSON pointer, e.g. 1/a',
  byte: 'base64-encoded bytes',
  int32: 'a whole number from -2147483648 to 2147483647',
  int64: 'a whole number from -9007199254740991 to 9007199254740991',
  float: 'a number',
  double: 'a number',
  password: 'a password',
  binary: 'binary data',
};

/** A subschema as compact JSON, without the parts that only annotate. */
export function schemaJson(s: unknown): string {
  return JSON.stringify(s, (key, value) =>
    key === 'description' || key === 'examples' || key === '$comment' || key === 'title' ? undefined : value,
  );
}

function names(list: unknown[]): string {
  return list.map((k) => `<${String(k)}>`).join(', ');
}

function lengths(s: Schema, unit: string): string[] {
  const min = num(s[`min${unit}`]);
  const max = num(s[`max${unit}`]);
  const word = unit === 'Length' ? 'character' : unit === 'Items' ? 'item' : 'field';
  const n = (v: number) => `${v} ${word}${v === 1 ? '' : 's'}`;
  if (min !== undefined && max !== undefined) {
    return [min === max ? `exactly ${n(min)}` : `${min} to ${n(max)}`];
  }
  if (min !== undefined) return [`at least ${n(min)}`];
  if (max !== undefined) return [`at most ${n(max)}`];
  return [];
}

function bounds(s: Schema, prefix: '' | 'format'): string[] {
  const key = (k: string) => (prefix === '' ? k : `format${k[0]!.toUpperCase()}${k.slice(1)}`);
  const show = (v: unknown) => (prefix === '' ? String(v) : JSON.stringify(v));
  const value = (k: string) => (prefix === '' ? bound(s, k) : s[key(k)]);
  const lo = value('minimum');
  const hi = value('maximum');
  const exLo = value('exclusiveMinimum');
  const exHi = value('exclusiveMaximum');
  const [atLeast, atMost, above, below] =
    prefix === ''
      ? ['at least', 'at most', 'greater than', 'less than']
      : ['no earlier than', 'no later than', 'later than', 'earlier than'];
  const out: string[] = [];
  if (lo !== undefined && hi !== undefined && prefix === '') out.push(`from ${show(lo)} to ${show(hi)}`);
  else {
    if (lo !== undefined) out.push(`${atLeast} ${show(lo)}`);
    if (hi !== undefined) out.push(`${atMost} ${show(hi)}`);
  }
  if (exLo !== undefined) out.push(`${above} ${show(exLo)}`);
  if (exHi !== undefined) out.push(`${below} ${show(exHi)}`);
  return out;
}

/** The constraints on a string, number or boolean value. */
function scalar(s: Schema): string[] {
  const out: string[] = [];
  if (typeof s.format === 'string') {
    const meaning = FORMAT_WORDS[s.format];
    out.push(meaning === undefined ? `format ${s.format}` : `format ${s.format}: ${meaning}`);
  }
  if (typeof s.pattern === 'string') out.push(`must match the regular expression ${s.pattern}`);
  out.push(...lengths(s, 'Length'));
  out.push(...bounds(s, ''));
  if (num(s.multipleOf) !== undefined) out.push(`a multiple of ${s.multipleOf}`);
  out.push(...bounds(s, 'format'));
  return out;
}

/** The constraints on an array as a whole (its items' own are said per item). */
export function arrayConstraints(s: Schema): string[] {
  const out = lengths(s, 'Items');
  if (s.uniqueItems === true) out.push('no two items alike');
  if (s.contains !== undefined) {
    const min = num(s.minContains) ?? 1;
    const max = num(s.maxContains);
    const how = max === undefined ? `at least ${min}` : min === max ? `exactly ${min}` : `${min} to ${max}`;
    out.push(`${how} item${min === 1 && max === undefined ? '' : 's'} matching ${schemaJson(s.contains)}`);
  }
  if (Array.isArray(s.prefixItems)) {
    out.push(`the first items, in order: ${s.prefixItems.map((p) => schemaJson(p)).join(', ')}`);
  }
  if (s.unevaluatedItems === false) out.push('no items beyond those described');
  return out;
}

/** The constraints on an object as a whole (its fields' own are said per field). */
function objectConstraints(s: Schema): string[] {
  const out = lengths(s, 'Properties');
  if (s.additionalProperties === false || s.unevaluatedProperties === false) {
    out.push('no fields other than those listed');
  } else if (isSchema(s.additionalProperties)) {
    out.push(`other fields must each match ${schemaJson(s.additionalProperties)}`);
  }
  if (isSchema(s.unevaluatedProperties)) {
    out.push(`other fields must each match ${schemaJson(s.unevaluatedProperties)}`);
  }
  if (isSchema(s.patternProperties)) {
    for (const [re, sub] of Object.entries(s.patternProperties)) {
      out.push(`fields whose name matches ${re} must match ${schemaJson(sub)}`);
    }
  }
  if (s.propertyNames !== undefined) out.push(`field names must match ${schemaJson(s.propertyNames)}`);
  if (isSchema(s.dependentRequired)) {
    for (const [key, needs] of Object.entries(s.dependentRequired)) {
      if (Array.isArray(needs) && needs.length > 0) out.push(`with <${key}>, also ${names(needs)}`);
    }
  }
  if (isSchema(s.dependentSchemas)) {
    for (const [key, sub] of Object.entries(s.dependentSchemas)) {
      out.push(`with <${key}>, the whole must also match ${schemaJson(sub)}`);
    }
  }
  return out;
}

function composition(s: Schema): string[] {
  const out: string[] = [];
  const list = (v: unknown) => (Array.isArray(v) ? v.map((x) => schemaJson(x)).join(' ; ') : '');
  if (Array.isArray(s.allOf)) out.push(`must match all of: ${list(s.allOf)}`);
  if (Array.isArray(s.anyOf)) out.push(`must match at least one of: ${list(s.anyOf)}`);
  if (Array.isArray(s.oneOf)) out.push(`must match exactly one of: ${list(s.oneOf)}`);
  if (s.not !== undefined) out.push(`must not match ${schemaJson(s.not)}`);
  if (s.if !== undefined && (s.then !== undefined || s.else !== undefined)) {
    let rule = `if it matches ${schemaJson(s.if)}`;
    if (s.then !== undefined) rule += `, it must match ${schemaJson(s.then)}`;
    if (s.else !== undefined)
      rule += `${s.then !== undefined ? '; otherwise' : ', or else'} ${schemaJson(s.else)}`;
    out.push(rule);
  }
  return out;
}

/**
 * The constraints on the value at this position, in words: its own (scalar, array or object) and
 * the subschemas it must also match. Empty when there are none.
 */
export function constraintWords(s: Schema): string[] {
  const type = mainType(s);
  const own = type === 'array' ? arrayConstraints(s) : type === 'object' ? objectConstraints(s) : scalar(s);
  return [...own, ...composition(s)];
}
