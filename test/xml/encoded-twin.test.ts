/**
 * The decode of what was just encoded (codec.ts EncodedTwin): a delivery in memory takes the value
 * encodePayload built beside the text instead of parsing the text back. It must be, value for
 * value and key for key, what the parse and decode of that text give, under every limit the parse
 * would check, or not be used at all. Compared here over a few thousand seeded payloads.
 */
import { describe, expect, it } from 'vitest';
import { decodePayload, encodePayload } from '../../src/xml/codec.ts';
import { takeEncoded } from '../../src/xml/encoded-twin.ts';
import { buildEnvelope, type EnvelopeMeta, parseEnvelope } from '../../src/xml/envelope.ts';
import { parseEnvelopeOf, payloadValue } from '../../src/xml/envelope-of.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';
import { DEFAULT_XML_LIMITS as L, type XmlLimits } from '../../src/xml/limits.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

const META: EnvelopeMeta = { from: 'a', to: 'b', thread: '2b1c7a3e-5f0d-4a8b-9c61-0e2d4f7b8a91' };

const PROPS: Record<string, JsonSchema> = {
  s: { type: 'string' },
  i: { type: 'integer' },
  n: { type: 'number' },
  b: { type: 'boolean' },
  sn: { type: ['string', 'number'] },
  nul: { type: 'null' },
  ns: { type: ['null', 'string'] },
  bi: { type: ['boolean', 'integer'] },
  ai: { type: 'array', items: { type: 'integer' } },
  as: { type: 'array', items: { type: 'string' } },
  o: { type: 'object' },
  a: { type: 'array' },
  any: {},
  e: { enum: ['x', 1, true] },
};

const SCHEMAS: JsonSchema[] = [
  { type: 'object', properties: PROPS },
  { type: 'object', properties: PROPS, additionalProperties: { type: 'integer' } },
  { type: 'object', properties: { s: { type: 'string' } }, additionalProperties: false },
  {},
];

const VALUES: unknown[] = [
  '',
  ' ',
  'x',
  ' 5 ',
  '5',
  '-0',
  '1e3',
  '01',
  'true',
  'false',
  '1',
  '0',
  'null',
  'Hello, Ada!',
  'fifty characters long, longer than the text limit',
  'tab\there',
  'new\nline',
  '  lead and trail  ',
  'é日本🦀',
  'a&b',
  '<',
  '>',
  ']]',
  'cr\r',
  '\u0001',
  '\ud800',
  '\uFFFE',
  0,
  -0,
  1,
  -1,
  1.5,
  1e21,
  1e-7,
  5e-324,
  2 ** 53 + 2,
  Number.NaN,
  true,
  false,
  undefined,
  null,
  [1, 2],
  [],
  ['x'],
  { x: 1 },
  new Date(0),
  10n,
];

const EXTRA_KEYS = ['extra', 'x-y', 'a.b', '__proto__', 'p:k', 'Ünï', '_'];
const TAGS = ['ping', 'p:ping', 'Ünï', 'a.b-c_d'];

/** A value's shape with its key order, -0 told from 0, and own `__proto__` keys kept. */
function shape(v: unknown): unknown {
  if (typeof v === 'number') return Object.is(v, -0) ? 'num:-0' : `num:${v}`;
  if (typeof v === 'bigint') return `bigint:${v}`;
  if (v instanceof Date) return `date:${v.toISOString()}`;
  if (Array.isArray(v)) return ['arr', ...v.map(shape)];
  if (v !== null && typeof v === 'object') {
    return [
      'obj',
      Object.getPrototypeOf(v) === Object.prototype,
      ...Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    ];
  }
  return v;
}

type Outcome = { value: unknown; tag: string; xml: string; node: () => unknown } | { error: string };

/**
 * The parse's answer, or the delivery's (parseEnvelopeOf then payloadValue), for `schema`: what a
 * delivery reads, then (asked separately, as a delivery never asks) the payload's node.
 */
function outcome(read: () => ReturnType<typeof parseEnvelope>, schema: JsonSchema): Outcome {
  try {
    const env = read();
    return {
      value: shape(payloadValue(env, schema)),
      tag: env.tag,
      xml: env.payloadXml,
      node: () => {
        const node = env.node;
        return [node.name, node.ns, { ...node.attrs }, node.children.map((k) => [k.name, k.text])];
      },
    };
  } catch (error) {
    return { error: (error as { code?: string }).code ?? String(error) };
  }
}

/** Both outcomes alike, the nodes too when both read the envelope. */
function expectSame(delivered: Outcome, parsed: Outcome, what: string): void {
  if ('error' in delivered || 'error' in parsed) {
    expect(delivered, what).toEqual(parsed);
    return;
  }
  const { node: deliveredNode, ...d } = delivered;
  const { node: parsedNode, ...p } = parsed;
  expect(d, what).toEqual(p);
  expect(deliveredNode(), what).toEqual(parsedNode());
}

const LIMITS: XmlLimits[] = [
  L,
  { ...L, maxTextLength: 3 },
  // Above the envelope's own texts (the thread id), below the longest payload text.
  { ...L, maxTextLength: 40 },
  { ...L, maxElements: 3 },
  { ...L, maxDepth: 2 },
  { ...L, maxDepth: 3 },
  { ...L, maxBytes: 200 },
];

describe('the decode of what was just encoded', () => {
  it('is what the parse and decode of the text give, or is not used', () => {
    const next = seededRandom(29);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    let used = 0;
    let cases = 0;
    for (let round = 0; round < 4_000; round++) {
      const schema = pick(SCHEMAS);
      const keys = [...Object.keys(PROPS), ...EXTRA_KEYS];
      const value: Record<string, unknown> = {};
      const count = 1 + Math.floor(next() * 4);
      for (let k = 0; k < count; k++) {
        const key = pick(keys);
        Object.defineProperty(value, key, { value: pick(VALUES), enumerable: true, writable: true });
      }
      const limits = pick(LIMITS);
      // At the delivery the target's schema, mostly the one it was encoded by.
      const target = next() < 0.8 ? schema : pick(SCHEMAS);
      let envelope: string;
      try {
        // Encoded under the delivery's element limit, or (another daemon's) the default one.
        const elements = next() < 0.5 ? limits.maxElements : L.maxElements;
        envelope = buildEnvelope(META, encodePayload(pick(TAGS), value, schema, elements));
      } catch {
        continue; // refused before anything is sent
      }
      cases++;
      const delivered = outcome(() => {
        const env = parseEnvelopeOf(envelope, META, limits);
        if (env.encoded) used++;
        return env;
      }, target);
      const parsed = outcome(() => parseEnvelope(envelope, limits), target);
      expectSame(delivered, parsed, `round ${round}: ${JSON.stringify(shape(value))}`);
    }
    // The fast path was taken (not a check that compares the parse with itself), and not always.
    expect(used).toBeGreaterThan(cases / 10);
    expect(used).toBeLessThan(cases);
  });

  it('is taken once: a second delivery of the same text parses, and gets an object of its own', () => {
    const schema = SCHEMAS[0]!;
    const envelope = buildEnvelope(META, encodePayload('ping', { s: 'hi', i: 2 }, schema));
    const first = parseEnvelopeOf(envelope, META, L);
    const second = parseEnvelopeOf(envelope, META, L);
    expect(first.encoded).toBeDefined();
    expect(second.encoded).toBeUndefined();
    const a = payloadValue(first, schema);
    const b = payloadValue(second, schema);
    expect(a).toEqual({ s: 'hi', i: 2 });
    expect(b).toEqual(a);
    expect(b).not.toBe(a);
  });

  it('is a new object: the sender changing its own afterwards changes nothing delivered', () => {
    const schema = SCHEMAS[0]!;
    const mine = { s: 'before', i: 1 };
    const envelope = buildEnvelope(META, encodePayload('ping', mine, schema));
    mine.s = 'after';
    const value = payloadValue(parseEnvelopeOf(envelope, META, L), schema);
    expect(value).toEqual({ s: 'before', i: 1 });
    expect(value).not.toBe(mine);
  });

  it('belongs to the text it was encoded as: another text, or one encoded since, parses', () => {
    const schema = SCHEMAS[0]!;
    const xml = encodePayload('ping', { i: 1 }, schema);
    encodePayload('ping', { i: 2 }, schema);
    expect(takeEncoded(xml)).toBeUndefined();
    const envelope = buildEnvelope(META, xml);
    const env = parseEnvelopeOf(envelope, META, L);
    expect(env.encoded).toBeUndefined();
    expect(payloadValue(env, schema)).toEqual(decodePayload(parseEnvelope(envelope, L).node, schema));
  });
});
