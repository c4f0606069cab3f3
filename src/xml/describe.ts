/**
 * What a listener's payload schema says, in three forms: an XSD (for XML tooling and
 * `organism describe`), an example instance (valid against the schema once decoded), and a short
 * prompt fragment telling an LLM how to address the listener. All three follow the codec's
 * mapping (codec.ts): properties are child elements, arrays repeat the element.
 */
import { encodePayload, escapeText } from './codec.ts';
import { arrayConstraints, constraintWords } from './constraints.ts';
import type { PayloadSpec } from './json-schema.ts';
import { DEFAULT_XML_LIMITS } from './limits.ts';
import { parsePayload, type XmlNode } from './parse.ts';
import { isSchema, mainType, num, properties, requiredSet, type Schema, typesOf } from './schema-facts.ts';
import { patternSample } from './xsd-regex.ts';

// The XSD form (schemaToXsd) is in xsd.ts and not re-exported here: the bus imports this module at
// start for the prompt fragments, and the XSD is only asked for by `organism describe` and the API.

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

/** Values a pattern without `examples` commonly accepts, tried before one built from the pattern. */
const PATTERN_TRIES = ['text', 'example', 'abc', 'ABC', '12345', 'abc123', 'ABC-123', 'Text 1', 'text1234!'];

function matching(pattern: string, first: string): string | undefined {
  try {
    const re = new RegExp(pattern, 'u');
    return [first, ...PATTERN_TRIES].find((v) => re.test(v)) ?? patternSample(pattern);
  } catch {
    return undefined;
  }
}

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
      // uniqueItems: distinct strings and numbers (other items repeat, the constraint is in the words).
      const nth = (i: number) =>
        s.uniqueItems !== true || i === 0
          ? item
          : typeof item === 'string'
            ? `${item}${i + 1}`
            : typeof item === 'number'
              ? item + i * (num((s.items as Schema | undefined)?.multipleOf) ?? 1)
              : item;
      return Array.from({ length: count }, (_, i) => nth(i));
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
      const step = num(s.multipleOf);
      if (step !== undefined && step > 0) v = Math.ceil(v / step) * step;
      if (exLo !== undefined && v <= exLo) v += step ?? (isInt ? 1 : 0.5);
      // 0.1 * 3 is 0.30000000000000004: written as the multiple it is.
      return step !== undefined ? Number(v.toPrecision(12)) : v;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string': {
      let v = (typeof s.format === 'string' && FORMAT_EXAMPLES[s.format]) || 'text';
      if (typeof s.pattern === 'string') {
        const sample = matching(s.pattern, v);
        // Padded or cut to a length, it might no longer match: the lengths are in the words.
        if (sample !== undefined) return sample;
      }
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
  return typesOf(s).join(' or ') || 'any';
}

/** `(type, required; constraint; constraint)`: what the validator will check, said before it does. */
function fieldLines(s: Schema, indent: string, depth: number): string[] {
  const required = requiredSet(s);
  const lines: string[] = [];
  for (const [key, p] of properties(s)) {
    const isArray = mainType(p) === 'array';
    const item = isArray && isSchema(p.items) ? p.items : isArray ? {} : p;
    const parts = [
      isArray ? `list of ${typeLabel(item)}; repeat <${key}> once per item` : typeLabel(p),
      required.has(key) ? 'required' : 'optional',
    ];
    const rules = isArray
      ? [...arrayConstraints(p), ...constraintWords(item).map((w) => `each item: ${w}`)]
      : constraintWords(p);
    const head = rules.length > 0 ? `${parts.join(', ')}; ${rules.join('; ')}` : parts.join(', ');
    const desc = typeof p.description === 'string' && p.description !== '' ? `: ${p.description}` : '';
    lines.push(`${indent}- <${key}> (${head})${desc}`);
    if (mainType(item) === 'object' && depth < 4) lines.push(...fieldLines(item, `${indent}  `, depth + 1));
  }
  return lines;
}

/** Short usage text for an LLM: what the listener does, the tag, its fields, and an example. */
export function schemaToPrompt(spec: PayloadSpec, name: string, description: string): string {
  const fields = fieldLines(spec.schema, '', 0);
  const whole = constraintWords(spec.schema);
  return [
    `${name}: ${description}`,
    `To address ${name}, send one <${spec.tag}> element.`,
    fields.length > 0 ? `Fields (child elements):\n${fields.join('\n')}` : 'It takes no fields.',
    ...(whole.length > 0 ? [`The <${spec.tag}> as a whole: ${whole.join('; ')}.`] : []),
    `Example:\n${schemaToExample(spec)}`,
  ].join('\n');
}
