/**
 * Payload XML <-> plain object, guided by the listener's JSON Schema.
 *
 * Mapping (decode; encode is the inverse):
 * - each child element is a property named by its local name; attributes are read as properties
 *   too when no child element of that name exists (encode always writes child elements);
 * - `integer`/`number` text such as "42" becomes 42, "true"/"false" (and "1"/"0") become booleans
 *   for `boolean`, an empty element becomes null for `null` (when `string` is not also allowed);
 * - a property of type `array` is written as the element repeated once per item
 *   (`<tag>a</tag><tag>b</tag>` -> `tag: ['a', 'b']`); an empty array is simply absent;
 * - nested objects are nested elements; missing optional fields stay absent;
 * - elements the schema does not name are decoded generically and kept, so ajv
 *   (`additionalProperties: false`) can reject them by name. Generic decoding: a leaf element is
 *   its text, an element with children an object, a repeated element an array.
 * Text that does not coerce (e.g. "abc" for an integer) stays a string so ajv reports it.
 *
 * Compiled decoders/encoders are cached per schema object (WeakMap), so the per-message cost is one
 * walk over the tree with no schema interpretation.
 */
import { XmlError } from '../errors.ts';
import { isXmlName } from './chars.ts';
import { TwinBuilder } from './encoded-twin.ts';
import type { JsonSchema } from './json-schema.ts';
import type { XmlNode } from './parse.ts';
import { NO_ATTRS, tooManyElements } from './parser.ts';
import { coerceText, decodeLeaf, GENERIC, type Plan, planFor, setOwn } from './plan.ts';

// ---------------------------------------------------------------- escaping

const TEXT_SPECIAL = /[&<>\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;
const ATTR_SPECIAL = /[&<>"'\t\n\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;

function escapeWith(s: string, attr: boolean): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let rep: string;
    switch (c) {
      case 38:
        rep = '&amp;';
        break;
      case 60:
        rep = '&lt;';
        break;
      case 62:
        rep = '&gt;';
        break;
      case 13:
        // A literal CR would be normalized away by any parser; a reference survives.
        rep = '&#13;';
        break;
      case 34:
        if (!attr) continue;
        rep = '&quot;';
        break;
      case 39:
        if (!attr) continue;
        rep = '&apos;';
        break;
      case 9:
      case 10:
        // Literal tabs and newlines in attribute values are normalized to spaces; references are not.
        if (!attr) continue;
        rep = c === 9 ? '&#9;' : '&#10;';
        break;
      default:
        if (c < 0x20 || c === 0xfffe || c === 0xffff) {
          throw new XmlError(
            'xml.unencodable',
            `character U+${c.toString(16).toUpperCase().padStart(4, '0')} cannot be represented in XML 1.0`,
          );
        }
        continue;
    }
    out += s.slice(last, i) + rep;
    last = i + 1;
  }
  return out + s.slice(last);
}

/** Escapes character data: & < > and CR; refuses characters XML 1.0 cannot carry (NUL, C0 controls). */
export function escapeText(s: string): string {
  return TEXT_SPECIAL.test(s) ? escapeWith(s, false) : s;
}

/** Escapes an attribute value for either quote style: & < > " ' and tab/newline/CR as references. */
export function escapeAttr(s: string): string {
  return ATTR_SPECIAL.test(s) ? escapeWith(s, true) : s;
}

// ---------------------------------------------------------------- decode

function decodeElement(el: XmlNode, plan: Plan): unknown {
  if (el.children.length === 0 && el.attrs === NO_ATTRS) return decodeLeaf(el.text, plan);
  if (plan.any) {
    if (el.children.length > 0) return decodeObject(el, plan);
    if (el.attrs !== NO_ATTRS && el.text.trim() === '' && hasDataAttributes(el))
      return decodeObject(el, plan);
    return el.text;
  }
  if (plan.obj && (el.children.length > 0 || !plan.str)) return decodeObject(el, plan);
  if (plan.arr && !plan.str && !plan.num && !plan.bool) {
    // An array that is itself an element (array of arrays): each child element is one item.
    return el.children.map((child) => decodeElement(child, plan.items));
  }
  return coerceText(el.text, plan);
}

function hasDataAttributes(el: XmlNode): boolean {
  for (const key in el.attrs) if (key.indexOf(':') === -1 && key !== 'xmlns') return true;
  return false;
}

function decodeObject(el: XmlNode, plan: Plan): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = plan.props;
  let repeated: Set<string> | null = null;
  const children = el.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    const key = child.local;
    const sub = (props === null ? undefined : props.get(key)) ?? plan.extra;
    if (sub.arr && !sub.any) {
      const list = out[key];
      const value = decodeElement(child, sub.items);
      if (Array.isArray(list)) list.push(value);
      else setOwn(out, key, [value]);
      continue;
    }
    const value = decodeElement(child, sub);
    if (!Object.hasOwn(out, key)) {
      setOwn(out, key, value);
    } else if (repeated?.has(key)) {
      (out[key] as unknown[]).push(value);
    } else {
      // Repeated although not declared an array: keep every value; ajv then names the field.
      repeated ??= new Set();
      repeated.add(key);
      setOwn(out, key, [out[key], value]);
    }
  }
  if (el.attrs !== NO_ATTRS) {
    for (const key in el.attrs) {
      if (key.indexOf(':') !== -1 || key === 'xmlns' || Object.hasOwn(out, key)) continue;
      const sub = (props === null ? undefined : props.get(key)) ?? plan.extra;
      const text = el.attrs[key]!;
      setOwn(out, key, sub.arr && !sub.any ? [coerceText(text, sub.items)] : coerceText(text, sub));
    }
  }
  return out;
}

/**
 * Payload element -> object by `schema` (the payload's JSON Schema, an object schema whose
 * properties are the child elements). Pass `{}` to decode generically.
 */
export function decodePayload(node: XmlNode, schema: JsonSchema): Record<string, unknown> {
  return decodeObject(node, planFor(schema));
}

// ---------------------------------------------------------------- encode

const MAX_ENCODE_DEPTH = 1000;
const knownNames = new Set<string>();

function checkName(name: string): void {
  if (knownNames.has(name)) return;
  if (!isXmlName(name)) {
    throw new XmlError('xml.unencodable', `"${name}" cannot be an XML element name`);
  }
  if (knownNames.size < 10_000) knownNames.add(name);
}

/**
 * Elements encodePayload may still write, and its bound: an object of 262,000 empty strings (what
 * an MCP client can send within the body limit) took ~0.1 s to encode before the parse refused it.
 * Module state is safe: encoding is synchronous and saved around a nested call.
 */
let elementsLeft = Number.POSITIVE_INFINITY;
let elementBound = Number.POSITIVE_INFINITY;

function encodeProp(key: string, v: unknown, plan: Plan, depth: number): string {
  if (v === undefined) return '';
  checkName(key);
  // Every value is one element, except an array (its items are).
  if (!Array.isArray(v) && --elementsLeft < 0) tooManyElements(elementBound);
  switch (typeof v) {
    case 'string':
      return v === '' ? `<${key}/>` : '<' + key + '>' + escapeText(v) + '</' + key + '>';
    case 'number':
      if (!Number.isFinite(v))
        throw new XmlError('xml.unencodable', `property "${key}" is ${v}, not a finite number`);
      return '<' + key + '>' + String(v) + '</' + key + '>';
    case 'boolean':
      return '<' + key + '>' + (v ? 'true' : 'false') + '</' + key + '>';
    case 'bigint':
      return '<' + key + '>' + v.toString() + '</' + key + '>';
    case 'object': {
      if (v === null) return `<${key}/>`;
      if (depth > MAX_ENCODE_DEPTH) {
        throw new XmlError(
          'xml.unencodable',
          `value nests deeper than ${MAX_ENCODE_DEPTH} levels (is it cyclic?)`,
        );
      }
      if (Array.isArray(v)) {
        let s = '';
        for (const item of v) {
          if (Array.isArray(item) && --elementsLeft < 0) tooManyElements(elementBound);
          s += Array.isArray(item)
            ? '<' + key + '>' + encodeProp('item', item, plan.items, depth + 1) + '</' + key + '>'
            : encodeProp(key, item, plan.items, depth + 1);
        }
        return s;
      }
      if (v instanceof Date) return '<' + key + '>' + v.toISOString() + '</' + key + '>';
      const body = encodeBody(v as Record<string, unknown>, plan, depth + 1);
      return body === '' ? `<${key}/>` : '<' + key + '>' + body + '</' + key + '>';
    }
    default:
      throw new XmlError('xml.unencodable', `property "${key}" holds a ${typeof v}, which has no XML form`);
  }
}

/** The elements of `obj`'s properties; the root's (depth 0) also told to `twin`, value for value. */
function encodeBody(
  obj: Record<string, unknown>,
  plan: Plan,
  depth: number,
  twin: TwinBuilder | null = null,
): string {
  let s = '';
  const props = plan.props;
  if (props !== null) {
    if (plan.propKeys === null || plan.propPlans === null) {
      plan.propKeys = [...props.keys()];
      plan.propPlans = [...props.values()];
    }
    const keys = plan.propKeys;
    const subs = plan.propPlans;
    for (let i = 0; i < keys.length; i++) {
      if (Object.hasOwn(obj, keys[i]!)) s += encodeChild(obj, keys[i]!, subs[i]!, depth, twin);
    }
  }
  for (const key of Object.keys(obj)) {
    if (props === null || !props.has(key)) s += encodeChild(obj, key, plan.extra, depth, twin);
  }
  return s;
}

/** One property's elements, its value read once; the root's (`twin` given) also told to the twin. */
function encodeChild(
  obj: Record<string, unknown>,
  key: string,
  plan: Plan,
  depth: number,
  twin: TwinBuilder | null,
): string {
  const v = obj[key];
  const xml = encodeProp(key, v, plan, depth);
  if (twin !== null) twin.add(key, v, plan);
  return xml;
}

/**
 * Object -> payload XML `<tag>...</tag>`: properties become child elements (in schema order when a
 * schema is given), arrays repeat the element, text is escaped. Throws XmlError('xml.unencodable')
 * for names that cannot be XML element names and values with no XML form, and
 * xml.too_many_elements as soon as it would write more than `maxElements` (the root included;
 * what the parse of the result would refuse), before the rest is encoded.
 */
export function encodePayload(
  tag: string,
  value: Record<string, unknown>,
  schema?: JsonSchema,
  maxElements = Number.POSITIVE_INFINITY,
): string {
  checkName(tag);
  const savedLeft = elementsLeft;
  const savedBound = elementBound;
  elementsLeft = maxElements - 1;
  elementBound = maxElements;
  try {
    if (schema === undefined) return '<' + tag + '>' + encodeBody(value, GENERIC, 0) + '</' + tag + '>';
    // With a schema, what a delivery decodes by that schema's plan (see encoded-twin.ts).
    const plan = planFor(schema);
    const twin = new TwinBuilder();
    const xml = '<' + tag + '>' + encodeBody(value, plan, 0, twin) + '</' + tag + '>';
    twin.written(xml, tag, plan);
    return xml;
  } finally {
    elementsLeft = savedLeft;
    elementBound = savedBound;
  }
}
