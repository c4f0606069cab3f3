/**
 * What a listener's payload schema says, in three forms: an XSD (for XML tooling and
 * `organism describe`), an example instance (valid against the schema once decoded), and a short
 * prompt fragment telling an LLM how to address the listener. All three follow the codec's
 * mapping (codec.ts): properties are child elements, arrays repeat the element.
 */
import { encodePayload, escapeAttr, escapeText } from './codec.ts';
import type { JsonSchema, PayloadSpec } from './json-schema.ts';
import { DEFAULT_XML_LIMITS } from './limits.ts';
import { parsePayload, type XmlNode } from './parse.ts';

type Schema = JsonSchema;

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function typesOf(s: Schema): string[] {
  const t = s.type;
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  if (isSchema(s.properties)) return ['object'];
  if (s.items !== undefined) return ['array'];
  const values = Array.isArray(s.enum) ? s.enum : 'const' in s ? [s.const] : [];
  const inferred = new Set<string>();
  for (const v of values) inferred.add(v === null ? 'null' : typeof v);
  return [...inferred];
}

/** The main type: the first non-null one. */
function mainType(s: Schema): string | undefined {
  const types = typesOf(s);
  return types.find((t) => t !== 'null') ?? types[0];
}

function properties(s: Schema): [string, Schema][] {
  if (!isSchema(s.properties)) return [];
  return Object.entries(s.properties).map(([k, v]) => [k, isSchema(v) ? v : {}]);
}

function requiredSet(s: Schema): Set<string> {
  return new Set(
    Array.isArray(s.required) ? s.required.filter((x): x is string => typeof x === 'string') : [],
  );
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

// ---------------------------------------------------------------- XSD

const XS_FORMATS: Record<string, string> = {
  'date-time': 'xs:dateTime',
  date: 'xs:date',
  time: 'xs:time',
  uri: 'xs:anyURI',
  'uri-reference': 'xs:anyURI',
  iri: 'xs:anyURI',
  url: 'xs:anyURI',
  duration: 'xs:duration',
};

function simpleBase(s: Schema): string {
  const types = typesOf(s).filter((t) => t !== 'null');
  if (types.length !== 1) return 'xs:string';
  switch (types[0]) {
    case 'integer':
      return typesOf(s).includes('null') ? 'xs:string' : 'xs:integer';
    case 'number':
      return typesOf(s).includes('null') ? 'xs:string' : 'xs:double';
    case 'boolean':
      return typesOf(s).includes('null') ? 'xs:string' : 'xs:boolean';
    case 'string':
      return (typeof s.format === 'string' && XS_FORMATS[s.format]) || 'xs:string';
    default:
      return 'xs:string';
  }
}

function facets(s: Schema, base: string): string[] {
  const out: string[] = [];
  if (Array.isArray(s.enum)) {
    for (const v of s.enum) if (v !== null) out.push(`<xs:enumeration value="${escapeAttr(String(v))}"/>`);
  } else if ('const' in s && s.const !== null) {
    out.push(`<xs:enumeration value="${escapeAttr(String(s.const))}"/>`);
  }
  if (base === 'xs:string' || base === 'xs:anyURI') {
    if (num(s.minLength) !== undefined) out.push(`<xs:minLength value="${s.minLength}"/>`);
    if (num(s.maxLength) !== undefined) out.push(`<xs:maxLength value="${s.maxLength}"/>`);
  }
  if (base === 'xs:integer' || base === 'xs:double') {
    if (num(s.minimum) !== undefined) out.push(`<xs:minInclusive value="${s.minimum}"/>`);
    if (num(s.maximum) !== undefined) out.push(`<xs:maxInclusive value="${s.maximum}"/>`);
    if (num(s.exclusiveMinimum) !== undefined) out.push(`<xs:minExclusive value="${s.exclusiveMinimum}"/>`);
    if (num(s.exclusiveMaximum) !== undefined) out.push(`<xs:maxExclusive value="${s.exclusiveMaximum}"/>`);
  }
  return out;
}

function annotation(s: Schema, pad: string): string {
  if (typeof s.description !== 'string' || s.description === '') return '';
  return `${pad}<xs:annotation><xs:documentation>${escapeText(s.description)}</xs:documentation></xs:annotation>\n`;
}

/** `<xs:element>` for one property (or the root when `occurs` is ''). */
function xsdElement(name: string, s: Schema, occurs: string, pad: string, depth: number): string {
  const open = `${pad}<xs:element name="${escapeAttr(name)}"${occurs}`;
  const doc = annotation(s, `${pad}  `);
  const type = mainType(s);
  if (type === 'object' || (type === undefined && isSchema(s.properties))) {
    const props = properties(s);
    if (props.length === 0 || depth > 32) {
      return doc === ''
        ? `${open} type="xs:anyType"/>\n`
        : `${open} type="xs:anyType">\n${doc}${pad}</xs:element>\n`;
    }
    const required = requiredSet(s);
    // xs:all (any order) unless a property repeats, which XSD 1.0 only allows in xs:sequence.
    const repeats = props.some(([, p]) => mainType(p) === 'array');
    const group = repeats ? 'xs:sequence' : 'xs:all';
    let body = '';
    for (const [key, p] of props) body += xsdProperty(key, p, required.has(key), `${pad}      `, depth + 1);
    return (
      `${open}>\n${doc}${pad}  <xs:complexType>\n${pad}    <${group}>\n${body}` +
      `${pad}    </${group}>\n${pad}  </xs:complexType>\n${pad}</xs:element>\n`
    );
  }
  if (type === undefined) {
    return doc === ''
      ? `${open} type="xs:anyType"/>\n`
      : `${open} type="xs:anyType">\n${doc}${pad}</xs:element>\n`;
  }
  if (type === 'null') {
    return `${open}>\n${doc}${pad}  <xs:complexType/>\n${pad}</xs:element>\n`;
  }
  const base = simpleBase(s);
  const f = facets(s, base);
  if (f.length === 0) {
    return doc === '' ? `${open} type="${base}"/>\n` : `${open} type="${base}">\n${doc}${pad}</xs:element>\n`;
  }
  const inner = f.map((x) => `${pad}      ${x}\n`).join('');
  return (
    `${open}>\n${doc}${pad}  <xs:simpleType>\n${pad}    <xs:restriction base="${base}">\n${inner}` +
    `${pad}    </xs:restriction>\n${pad}  </xs:simpleType>\n${pad}</xs:element>\n`
  );
}

function xsdProperty(key: string, s: Schema, required: boolean, pad: string, depth: number): string {
  if (mainType(s) === 'array') {
    const items = isSchema(s.items) ? { ...s.items } : {};
    if (items.description === undefined && typeof s.description === 'string')
      items.description = s.description;
    const min = required ? Math.max(1, num(s.minItems) ?? 1) : 0;
    const max = num(s.maxItems) ?? 'unbounded';
    return xsdElement(key, items, ` minOccurs="${min}" maxOccurs="${max}"`, pad, depth);
  }
  return xsdElement(key, s, required ? '' : ' minOccurs="0"', pad, depth);
}

/** XSD (1.0) for the payload element: one global element named by the tag, no target namespace. */
export function schemaToXsd(spec: PayloadSpec): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="unqualified">\n' +
    xsdElement(spec.tag, spec.schema, '', '  ', 0) +
    '</xs:schema>\n'
  );
}

// ---------------------------------------------------------------- example

const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2024-05-01T12:00:00Z',
  date: '2024-05-01',
  time: '12:00:00Z',
  email: 'ada@example.com',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  url: 'https://example.com/',
  uuid: '123e4567-e89b-42d3-a456-426614174000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
  duration: 'P1D',
};

function exampleValue(s: Schema, depth: number): unknown {
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('default' in s) return s.default;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  switch (mainType(s)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      if (depth > 16) return out;
      for (const [key, p] of properties(s)) out[key] = exampleValue(p, depth + 1);
      return out;
    }
    case 'array': {
      const item = exampleValue(isSchema(s.items) ? s.items : {}, depth + 1);
      const count = Math.max(1, num(s.minItems) ?? 1);
      return Array.from({ length: count }, () => item);
    }
    case 'integer':
    case 'number': {
      const isInt = mainType(s) === 'integer';
      const exLo = num(s.exclusiveMinimum);
      const exHi = num(s.exclusiveMaximum);
      const lo = num(s.minimum) ?? (exLo !== undefined ? exLo + (isInt ? 1 : 0.5) : undefined);
      const hi = num(s.maximum) ?? (exHi !== undefined ? exHi - (isInt ? 1 : 0.5) : undefined);
      let v = lo ?? (hi !== undefined ? Math.min(1, hi) : 1);
      if (isInt) v = Math.ceil(v);
      return v;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string': {
      let v = (typeof s.format === 'string' && FORMAT_EXAMPLES[s.format]) || 'text';
      const min = num(s.minLength);
      const max = num(s.maxLength);
      if (min !== undefined && v.length < min) v = v.padEnd(min, 'x');
      if (max !== undefined && v.length > max) v = v.slice(0, max);
      return v;
    }
    default:
      return 'text';
  }
}

function pretty(node: XmlNode, pad: string): string {
  if (node.children.length === 0) {
    return node.text === ''
      ? `${pad}<${node.name}/>\n`
      : `${pad}<${node.name}>${escapeText(node.text)}</${node.name}>\n`;
  }
  let s = `${pad}<${node.name}>\n`;
  for (const child of node.children) s += pretty(child, `${pad}  `);
  return `${s}${pad}</${node.name}>\n`;
}

/**
 * An example payload, valid against the schema once decoded (uses examples/defaults/enums):
 * indented, or with `oneLine` as one line of XML.
 */
export function schemaToExample(spec: PayloadSpec, options: { oneLine?: boolean } = {}): string {
  const value = exampleValue(spec.schema, 0);
  const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
  const xml = encodePayload(spec.tag, object as Record<string, unknown>, spec.schema);
  // One line is what `organism send` takes as its argument; indented is for reading.
  if (options.oneLine) return xml;
  return pretty(parsePayload(xml, DEFAULT_XML_LIMITS).node, '').trimEnd();
}

// ---------------------------------------------------------------- prompt

function typeLabel(s: Schema): string {
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if ('const' in s) return `exactly ${JSON.stringify(s.const)}`;
  const type = mainType(s);
  let label = typesOf(s).join(' or ') || 'any';
  if (type === 'string' && typeof s.format === 'string') label += `, ${s.format}`;
  if (type === 'integer' || type === 'number') {
    const lo = num(s.minimum);
    const hi = num(s.maximum);
    if (lo !== undefined && hi !== undefined) label += ` ${lo}..${hi}`;
    else if (lo !== undefined) label += ` >= ${lo}`;
    else if (hi !== undefined) label += ` <= ${hi}`;
  }
  if (type === 'string' && num(s.maxLength) !== undefined) label += `, at most ${s.maxLength} characters`;
  return label;
}

function fieldLines(s: Schema, indent: string, depth: number): string[] {
  const required = requiredSet(s);
  const lines: string[] = [];
  for (const [key, p] of properties(s)) {
    const isArray = mainType(p) === 'array';
    const item = isArray && isSchema(p.items) ? p.items : p;
    const type = isArray ? `list of ${typeLabel(item)}; repeat <${key}> once per item` : typeLabel(p);
    const desc = typeof p.description === 'string' && p.description !== '' ? `: ${p.description}` : '';
    lines.push(`${indent}- <${key}> (${type}, ${required.has(key) ? 'required' : 'optional'})${desc}`);
    if (mainType(item) === 'object' && depth < 4) lines.push(...fieldLines(item, `${indent}  `, depth + 1));
  }
  return lines;
}

/** Short usage text for an LLM: what the listener does, the tag, its fields, and an example. */
export function schemaToPrompt(spec: PayloadSpec, name: string, description: string): string {
  const fields = fieldLines(spec.schema, '', 0);
  return [
    `${name}: ${description}`,
    `To address ${name}, send one <${spec.tag}> element.`,
    fields.length > 0 ? `Fields (child elements):\n${fields.join('\n')}` : 'It takes no fields.',
    `Example:\n${schemaToExample(spec)}`,
  ].join('\n');
}
