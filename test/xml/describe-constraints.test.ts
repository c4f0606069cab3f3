/**
 * `describe` keeps every constraint: each assertion keyword the payload validator enforces shows in
 * the prompt fragment (in words) and in the XSD (as a facet where XSD has one, in the element's
 * documentation always); and where the XSD has a facet, xmllint accepts and refuses the same
 * payloads as the runtime (the codec, then ajv).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodePayload, escapeText } from '../../src/xml/codec.ts';
import { ASSERTIONS } from '../../src/xml/constraints.ts';
import { schemaToExample, schemaToPrompt } from '../../src/xml/describe.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';
import { DEFAULT_XML_LIMITS as L } from '../../src/xml/limits.ts';
import { parsePayload } from '../../src/xml/parse.ts';
import { compileValidator } from '../../src/xml/validate.ts';
import { schemaToXsd } from '../../src/xml/xsd.ts';
import { xmllintValidate } from '../helpers/xmllint.ts';

/** Per keyword: a field's schema using it, and the words the prompt (and the XSD's documentation) say. */
const KEYWORDS: Record<(typeof ASSERTIONS)[number], [JsonSchema, string]> = {
  pattern: [
    { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' },
    'must match the regular expression ^[A-Z]{2}-\\d{3}$',
  ],
  format: [{ type: 'string', format: 'email' }, 'format email: an email address'],
  minLength: [{ type: 'string', minLength: 3 }, 'at least 3 characters'],
  maxLength: [{ type: 'string', maxLength: 5 }, 'at most 5 characters'],
  minimum: [{ type: 'integer', minimum: 1 }, 'at least 1'],
  maximum: [{ type: 'integer', maximum: 12 }, 'at most 12'],
  exclusiveMinimum: [{ type: 'number', exclusiveMinimum: 0 }, 'greater than 0'],
  exclusiveMaximum: [{ type: 'number', exclusiveMaximum: 10 }, 'less than 10'],
  multipleOf: [{ type: 'integer', multipleOf: 3 }, 'a multiple of 3'],
  formatMinimum: [
    { type: 'string', format: 'date', formatMinimum: '2024-01-01' },
    'no earlier than "2024-01-01"',
  ],
  formatMaximum: [
    { type: 'string', format: 'date', formatMaximum: '2024-12-31' },
    'no later than "2024-12-31"',
  ],
  formatExclusiveMinimum: [
    { type: 'string', format: 'date', formatExclusiveMinimum: '2024-01-01' },
    'later than "2024-01-01"',
  ],
  formatExclusiveMaximum: [
    { type: 'string', format: 'date', formatExclusiveMaximum: '2024-12-31' },
    'earlier than "2024-12-31"',
  ],
  minItems: [{ type: 'array', items: { type: 'string' }, minItems: 2 }, 'at least 2 items'],
  maxItems: [{ type: 'array', items: { type: 'string' }, maxItems: 3 }, 'at most 3 items'],
  uniqueItems: [{ type: 'array', items: { type: 'string' }, uniqueItems: true }, 'no two items alike'],
  contains: [
    { type: 'array', items: { type: 'integer' }, contains: { minimum: 10 } },
    'at least 1 item matching {"minimum":10}',
  ],
  minContains: [
    { type: 'array', items: { type: 'integer' }, contains: { minimum: 10 }, minContains: 2 },
    'at least 2 items matching {"minimum":10}',
  ],
  maxContains: [
    { type: 'array', items: { type: 'integer' }, contains: { minimum: 10 }, maxContains: 2 },
    '1 to 2 items matching {"minimum":10}',
  ],
  prefixItems: [
    { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'integer' } },
    'the first items, in order: {"type":"string"}',
  ],
  unevaluatedItems: [
    { type: 'array', prefixItems: [{ type: 'string' }], unevaluatedItems: false },
    'no items beyond those described',
  ],
  minProperties: [
    { type: 'object', properties: { a: { type: 'string' } }, minProperties: 1 },
    'at least 1 field',
  ],
  maxProperties: [
    { type: 'object', properties: { a: { type: 'string' } }, maxProperties: 2 },
    'at most 2 fields',
  ],
  additionalProperties: [
    { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
    'no fields other than those listed',
  ],
  unevaluatedProperties: [
    { type: 'object', properties: { a: { type: 'string' } }, unevaluatedProperties: { type: 'integer' } },
    'other fields must each match {"type":"integer"}',
  ],
  patternProperties: [
    {
      type: 'object',
      properties: { a: { type: 'string' } },
      patternProperties: { '^x-': { type: 'string' } },
    },
    'fields whose name matches ^x- must match {"type":"string"}',
  ],
  propertyNames: [
    { type: 'object', properties: { a: { type: 'string' } }, propertyNames: { maxLength: 8 } },
    'field names must match {"maxLength":8}',
  ],
  dependentRequired: [
    {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' } },
      dependentRequired: { a: ['b'] },
    },
    'with <a>, also <b>',
  ],
  dependentSchemas: [
    {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' } },
      dependentSchemas: { a: { required: ['b'] } },
    },
    'with <a>, the whole must also match {"required":["b"]}',
  ],
  allOf: [
    { type: 'string', allOf: [{ minLength: 1 }, { maxLength: 9 }] },
    'must match all of: {"minLength":1} ; {"maxLength":9}',
  ],
  anyOf: [
    { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    'must match at least one of: {"type":"string"} ; {"type":"integer"}',
  ],
  oneOf: [
    {
      oneOf: [
        { type: 'integer', multipleOf: 2 },
        { type: 'integer', multipleOf: 3 },
      ],
    },
    'must match exactly one of:',
  ],
  not: [{ type: 'string', not: { const: 'admin' } }, 'must not match {"const":"admin"}'],
  if: [
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword
    { type: 'integer', if: { minimum: 10 }, then: { multipleOf: 10 } },
    'if it matches {"minimum":10}, it must match {"multipleOf":10}',
  ],
};

function spec(field: JsonSchema) {
  return { tag: 'c', schema: { type: 'object', properties: { f: field } } };
}

describe('every assertion keyword the validator enforces is said in the prompt and the XSD', () => {
  it('has a case for each keyword constraints.ts says', () => {
    expect(Object.keys(KEYWORDS).sort()).toEqual([...ASSERTIONS].sort());
  });

  it.each(Object.entries(KEYWORDS))('%s', (keyword, [field, words]) => {
    const prompt = schemaToPrompt(spec(field), 'c', 'checks');
    const xsd = schemaToXsd(spec(field));
    expect(prompt).toContain(words);
    expect(xsd).toContain(escapeText(words));
    // And not without the keyword (the words come from it, not from the rest of the schema).
    const without = { ...field };
    delete without[keyword];
    if (keyword === 'if') delete without.then;
    expect(schemaToPrompt(spec(without), 'c', 'checks')).not.toContain(words);
  });

  it('says the constraints on the payload as a whole and on nested fields', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        address: {
          type: 'object',
          properties: { zip: { type: 'string', pattern: '^[0-9]{5}$' } },
          required: ['zip'],
        },
      },
      minProperties: 1,
      additionalProperties: false,
    };
    const prompt = schemaToPrompt({ tag: 'order', schema }, 'shop', 'takes orders');
    expect(prompt).toContain('  - <zip> (string, required; must match the regular expression ^[0-9]{5}$)');
    expect(prompt).toContain('The <order> as a whole: at least 1 field; no fields other than those listed.');
  });

  it('says which pattern the XSD cannot check, and why', () => {
    const xsd = schemaToXsd(spec({ type: 'string', pattern: '^(?=.*\\d).{8,}$' }));
    expect(xsd).not.toContain('<xs:pattern');
    expect(xsd).toContain('the pattern is not checked by this XSD (lookaround');
  });
});

// ---------------------------------------------------------------- xmllint against the runtime

/** Fields each under one facet, all optional: an instance sets one field and tests that facet. */
const FACETS: Record<string, [JsonSchema, string[][]]> = {
  pattern: [
    { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' },
    [['AB-123'], ['ab-123'], ['AB-1234'], ['xAB-123']],
  ],
  unanchored: [{ type: 'string', pattern: 'cat' }, [['concatenate'], ['dog']]],
  date: [
    { type: 'string', format: 'date' },
    [['2024-05-01'], ['2024-13-01'], ['2024-05-01Z'], ['01.05.2024']],
  ],
  dateTime: [
    { type: 'string', format: 'date-time' },
    [['2024-05-01T12:00:00Z'], ['2024-05-01T12:00:00+02:00'], ['2024-05-01T12:00:00'], ['2024-05-01']],
  ],
  time: [{ type: 'string', format: 'time' }, [['12:00:00Z'], ['12:00:00'], ['25:00:00Z']]],
  duration: [{ type: 'string', format: 'duration' }, [['P1D'], ['PT2H'], ['1D'], ['P']]],
  email: [{ type: 'string', format: 'email' }, [['ada@example.com'], ['ada'], ['ada@'], ['a b@example.com']]],
  uuid: [{ type: 'string', format: 'uuid' }, [['123e4567-e89b-42d3-a456-426614174000'], ['123e4567']]],
  ipv4: [{ type: 'string', format: 'ipv4' }, [['192.0.2.1'], ['256.1.1.1'], ['1.2.3']]],
  uri: [{ type: 'string', format: 'uri' }, [['https://example.com/a'], ['example.com']]],
  hostname: [{ type: 'string', format: 'hostname' }, [['example.com'], ['-bad-.com'], ['a_b.com']]],
  lengths: [{ type: 'string', minLength: 3, maxLength: 5 }, [['abc'], ['ab'], ['abcdef'], ['😀😀😀']]],
  intBounds: [
    { type: 'integer', minimum: 1, maximum: 12 },
    [['1'], ['12'], ['0'], ['13'], ['1.5'], ['+3'], ['03']],
  ],
  intExclusive: [
    { type: 'integer', exclusiveMinimum: 1.5, exclusiveMaximum: 4 },
    [['1'], ['2'], ['3'], ['4']],
  ],
  numExclusive: [
    { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 10 },
    [['0'], ['0.1'], ['10'], ['9.99'], ['1e1'], ['5e-1'], ['.5'], ['INF']],
  ],
  multipleOf5: [{ type: 'integer', multipleOf: 5 }, [['10'], ['12'], ['-15'], ['5'], ['0']]],
  multipleOf4: [{ type: 'integer', multipleOf: 4 }, [['8'], ['116'], ['6'], ['1002'], ['-4']]],
  cents: [{ type: 'number', multipleOf: 0.01 }, [['1.25'], ['1.255'], ['3'], ['-0.5']]],
  enum: [{ enum: ['inside', 'terrace'] }, [['inside'], ['outside']]],
  const: [{ const: 42 }, [['42'], ['43']]],
  nullableMin: [{ type: ['integer', 'null'], minimum: 3 }, [[''], ['3'], ['2']]],
  boolean: [{ type: 'boolean' }, [['true'], ['1'], ['yes']]],
  items: [
    { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 3 },
    [[], ['a'], ['a', 'b'], ['a', 'b', 'c', 'd']],
  ],
  unique: [
    { type: 'array', items: { type: 'string' }, uniqueItems: true },
    [
      ['a', 'b'],
      ['a', 'a'],
    ],
  ],
  dateLimits: [
    { type: 'string', format: 'date', formatMinimum: '2024-01-01', formatExclusiveMaximum: '2025-01-01' },
    [['2024-01-01'], ['2023-12-31'], ['2024-12-31'], ['2025-01-01']],
  ],
};

describe('the XSD, checked by xmllint, accepts and refuses what the runtime does', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries(Object.entries(FACETS).map(([name, [field]]) => [name, field])),
    additionalProperties: false,
  };
  const xsd = schemaToXsd({ tag: 'c', schema });
  const validate = compileValidator('c', schema);
  const runtimeAccepts = (xml: string) => validate(decodePayload(parsePayload(xml, L).node, schema)) === null;

  it('is a schema xmllint compiles, and the example is valid for both', () => {
    const example = schemaToExample({ tag: 'c', schema });
    const check = xmllintValidate(xsd, [example]);
    expect(check.schemaErrors).toBe('');
    expect(check.valid, check.messages).toEqual([true]);
    expect(runtimeAccepts(example)).toBe(true);
  });

  it.each(Object.entries(FACETS))('%s', (name, [, instances]) => {
    const docs = instances.map(
      (values) => `<c>${values.map((v) => `<${name}>${escapeText(v)}</${name}>`).join('')}</c>`,
    );
    const runtime = docs.map(runtimeAccepts);
    // Each case has values on both sides: an XSD that accepted or refused everything fails.
    expect(runtime).toContain(true);
    expect(runtime).toContain(false);
    const check = xmllintValidate(xsd, docs);
    expect(check.valid, `${docs.join('\n')}\n${check.messages}`).toEqual(runtime);
  });
});

describe("a zod schema's JSON Schema form (toJSONSchema), as describe gets it for a Standard Schema", () => {
  const schema = z.toJSONSchema(
    z.object({
      email: z.email(),
      when: z.iso.datetime(),
      id: z.uuid(),
      code: z.string().regex(/^[A-Z]{3}$/),
      guests: z.number().int().min(1).max(12),
      tags: z.array(z.string()).min(1).max(3),
      qty: z.number().int().min(1),
    }),
  ) as JsonSchema;

  it('keeps its formats, patterns and bounds; xmllint compiles the XSD and takes the example the runtime takes', () => {
    const spec = { tag: 'z', schema };
    const xsd = schemaToXsd(spec);
    const prompt = schemaToPrompt(spec, 'zed', 'takes zod payloads');
    expect(prompt).toContain('- <code> (string, required; must match the regular expression ^[A-Z]{3}$)');
    expect(prompt).toContain('- <guests> (integer, required; from 1 to 12)');
    expect(prompt).toContain('format email: an email address');
    // zod's safe-integer limits on every int are not told as if the author had written them.
    expect(prompt).toContain('- <qty> (integer, required; at least 1)');
    expect(`${prompt}${xsd}`).not.toContain('9007199254740991');
    expect(xsd).toContain('<xs:pattern value="[A-Z]{3}"/>');
    const example = schemaToExample(spec);
    // The format's own example where it fits the pattern zod adds.
    expect(example).toContain('<email>ada@example.com</email>');
    const wrong = example.replace(/<code>[^<]*<\/code>/, '<code>ab</code>');
    const check = xmllintValidate(xsd, [example, wrong]);
    expect(check.schemaErrors).toBe('');
    expect(check.valid, check.messages).toEqual([true, false]);
    const validate = compileValidator('z', schema);
    expect(validate(decodePayload(parsePayload(example, L).node, schema))).toBeNull();
  });
});
