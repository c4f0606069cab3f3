import { parseXmlDocument } from 'slimdom';
import { describe, expect, it } from 'vitest';
import { decodePayload } from '../../src/xml/codec.ts';
import { schemaToExample, schemaToPrompt } from '../../src/xml/describe.ts';
import type { JsonSchema, PayloadSpec } from '../../src/xml/json-schema.ts';
import { DEFAULT_XML_LIMITS as L } from '../../src/xml/limits.ts';
import { parsePayload } from '../../src/xml/parse.ts';
import { compileValidator } from '../../src/xml/validate.ts';
import { schemaToXsd } from '../../src/xml/xsd.ts';

const XS = 'http://www.w3.org/2001/XMLSchema';

const booking: PayloadSpec = {
  tag: 'book-table',
  schema: {
    type: 'object',
    description: 'A table reservation',
    properties: {
      name: { type: 'string', description: 'Guest name', examples: ['Ada Lovelace'] },
      guests: { type: 'integer', minimum: 1, maximum: 12 },
      when: { type: 'string', format: 'date-time' },
      seating: { enum: ['inside', 'terrace'] },
      vegan: { type: 'boolean', default: false },
      budget: { type: 'number', exclusiveMinimum: 0 },
      code: { type: 'string', minLength: 6, maxLength: 6 },
      contact: { type: 'string', format: 'email' },
      notes: { type: 'array', items: { type: 'string' }, minItems: 2 },
      address: {
        type: 'object',
        properties: {
          street: { type: 'string' },
          zip: { type: 'string', pattern: '^[0-9]{5}$', examples: ['10115'] },
        },
        required: ['street'],
        additionalProperties: false,
      },
    },
    required: ['name', 'guests', 'when'],
    additionalProperties: false,
  },
};

function xsdElements(xsd: string): Map<string, Element> {
  const doc = parseXmlDocument(xsd);
  const out = new Map<string, Element>();
  for (const el of doc.getElementsByTagNameNS(XS, 'element'))
    out.set(el.getAttribute('name')!, el as unknown as Element);
  return out;
}

type Element = { getAttribute(n: string): string | null; namespaceURI: string | null };

describe('schemaToXsd', () => {
  it('is well-formed XSD declaring the payload element and each field', () => {
    const xsd = schemaToXsd(booking);
    // Well-formed for our own parser and for an independent namespace-aware one.
    expect(parsePayload(xsd, L).node.ns).toBe(XS);
    const els = xsdElements(xsd);
    expect([...els.keys()].sort()).toEqual(
      [
        'address',
        'book-table',
        'budget',
        'code',
        'contact',
        'guests',
        'name',
        'notes',
        'seating',
        'street',
        'vegan',
        'when',
        'zip',
      ].sort(),
    );
    expect(els.get('name')!.getAttribute('type')).toBe('xs:string');
    expect(els.get('name')!.getAttribute('minOccurs')).toBeNull();
    expect(els.get('vegan')!.getAttribute('type')).toBe('xs:boolean');
    expect(els.get('vegan')!.getAttribute('minOccurs')).toBe('0');
    expect(xsd).toMatch(/<xs:element name="when">[\s\S]*?<xs:restriction base="xs:dateTime">/);
    expect(els.get('notes')!.getAttribute('maxOccurs')).toBe('unbounded');
    // Optional, so absent or at least minItems: an optional group around two or more <notes>.
    expect(els.get('notes')!.getAttribute('minOccurs')).toBe('2');
    expect(xsd).toMatch(/<xs:sequence minOccurs="0">\s*<xs:element name="notes"/);
    expect(xsd).toContain('<xs:minInclusive value="1"/>');
    expect(xsd).toContain('<xs:maxInclusive value="12"/>');
    expect(xsd).toContain('<xs:enumeration value="terrace"/>');
    expect(xsd).toContain('<xs:documentation>Guest name</xs:documentation>');
    // A repeating field needs xs:sequence (XSD 1.0 xs:all cannot repeat); a nested object without one uses xs:all.
    expect(xsd).toMatch(/<xs:element name="book-table">[\s\S]*<xs:sequence>/);
    expect(xsd).toMatch(/<xs:element name="address" minOccurs="0">[\s\S]*<xs:all>/);
  });

  it('escapes descriptions and handles schemas with no fields', () => {
    const xsd = schemaToXsd({ tag: 'ping', schema: { type: 'object', description: 'a < b & c' } });
    expect(xsd).toContain('a &lt; b &amp; c');
    expect(xsdElements(xsd).get('ping')!.getAttribute('type')).toBe('xs:anyType');
  });
});

describe('schemaToExample', () => {
  it('gives an instance that validates against the schema once decoded', () => {
    const example = schemaToExample(booking);
    expect(example).toContain('<name>Ada Lovelace</name>');
    expect(example).toContain('<vegan>false</vegan>');
    expect(example).toContain('<seating>inside</seating>');
    expect(example).toContain('<zip>10115</zip>');
    expect(example.split('\n')[0]).toBe('<book-table>');
    const node = parsePayload(example, L).node;
    expect(node.local).toBe('book-table');
    const value = decodePayload(node, booking.schema);
    expect(compileValidator('book-table', booking.schema)(value)).toBeNull();
    expect((value.notes as unknown[]).length).toBe(2);
    expect((value.code as string).length).toBe(6);
  });

  it('validates for assorted schemas', () => {
    const schemas: JsonSchema[] = [
      { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      { type: 'object' },
      {
        type: 'object',
        properties: {
          n: { type: 'number', maximum: -5 },
          i: { type: 'integer', exclusiveMinimum: 10 },
          u: { type: 'string', format: 'uuid' },
          maybe: { type: ['string', 'null'] },
          nothing: { type: 'null' },
          list: {
            type: 'array',
            items: { type: 'object', properties: { k: { type: 'integer' } }, required: ['k'] },
          },
          c: { const: 'fixed' },
        },
        required: ['n', 'i', 'u', 'list', 'c'],
        additionalProperties: false,
      },
    ];
    for (const schema of schemas) {
      const example = schemaToExample({ tag: 'x', schema });
      const value = decodePayload(parsePayload(example, L).node, schema);
      expect(compileValidator('x', schema)(value), example).toBeNull();
    }
  });
});

describe('schemaToPrompt', () => {
  it('tells an LLM the description, tag, fields and an example', () => {
    const prompt = schemaToPrompt(booking, 'booker', 'Books restaurant tables.');
    expect(prompt.split('\n').slice(0, 2)).toEqual([
      'booker: Books restaurant tables.',
      'To address booker, send one <book-table> element.',
    ]);
    expect(prompt).toContain('- <name> (string, required): Guest name');
    expect(prompt).toContain('- <guests> (integer, required; from 1 to 12)');
    expect(prompt).toContain('- <seating> (one of "inside", "terrace", optional)');
    expect(prompt).toContain(
      '- <notes> (list of string; repeat <notes> once per item, optional; at least 2 items)',
    );
    expect(prompt).toContain('  - <street> (string, required)');
    expect(prompt).toContain(`Example:\n${schemaToExample(booking)}`);
  });
});
