import { describe, expect, it } from 'vitest';
import { XmlError } from '../../src/errors.ts';
import { decodePayload, encodePayload, escapeAttr, escapeText } from '../../src/xml/codec.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';
import { DEFAULT_XML_LIMITS as L } from '../../src/xml/limits.ts';
import { parsePayload } from '../../src/xml/parse.ts';

const order: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    price: { type: 'number' },
    paid: { type: 'boolean' },
    note: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    qty: { type: 'array', items: { type: 'integer' } },
    customer: {
      type: 'object',
      properties: { name: { type: 'string' }, vip: { type: 'boolean' }, age: { type: ['integer', 'null'] } },
    },
    lines: {
      type: 'array',
      items: { type: 'object', properties: { sku: { type: 'string' }, n: { type: 'integer' } } },
    },
  },
};

function decode(xml: string, schema: JsonSchema = order): Record<string, unknown> {
  return decodePayload(parsePayload(xml, L).node, schema);
}

describe('decodePayload by schema', () => {
  it('coerces numbers, booleans, arrays and nested objects', () => {
    const value = decode(
      '<order><id>42</id><price> -3.5e2 </price><paid>true</paid><note>007</note>' +
        '<tags>a</tags><tags>b</tags><qty>1</qty>' +
        '<customer><name>Ada</name><vip>0</vip><age/></customer>' +
        '<lines><sku>X1</sku><n>2</n></lines><lines><sku>Y2</sku><n>5</n></lines></order>',
    );
    expect(value).toEqual({
      id: 42,
      price: -350,
      paid: true,
      note: '007',
      tags: ['a', 'b'],
      qty: [1],
      customer: { name: 'Ada', vip: false, age: null },
      lines: [
        { sku: 'X1', n: 2 },
        { sku: 'Y2', n: 5 },
      ],
    });
  });

  it('leaves optional fields absent and keeps text that does not coerce, for ajv to report', () => {
    expect(decode('<order><id>forty-two</id><paid>maybe</paid></order>')).toEqual({
      id: 'forty-two',
      paid: 'maybe',
    });
    expect(decode('<order/>')).toEqual({});
  });

  it('keeps unknown elements and repeated non-array elements', () => {
    expect(
      decode('<order><id>1</id><extra><deep>x</deep></extra><note>a</note><note>b</note></order>'),
    ).toEqual({
      id: 1,
      extra: { deep: 'x' },
      note: ['a', 'b'],
    });
  });

  it('reads attributes as properties when no child element has the name', () => {
    expect(decode('<order id="7" paid="false" xmlns:x="urn:x" x:foo="1"><note>n</note></order>')).toEqual({
      id: 7,
      paid: false,
      note: 'n',
    });
  });

  it('decodes generically without a schema', () => {
    expect(decode('<p><a>1</a><b><c>x</c><c>y</c></b><d/><e k="v"/></p>', {})).toEqual({
      a: '1',
      b: { c: ['x', 'y'] },
      d: '',
      e: { k: 'v' },
    });
  });

  it('never lets an element named __proto__ touch the prototype', () => {
    const v = decode('<p><__proto__><polluted>yes</polluted></__proto__></p>', {});
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('caches the compiled plan per schema object but follows a changed schema object', () => {
    const a = { type: 'object', properties: { n: { type: 'integer' } } };
    const b = { type: 'object', properties: { n: { type: 'string' } } };
    expect(decode('<p><n>5</n></p>', a)).toEqual({ n: 5 });
    expect(decode('<p><n>5</n></p>', b)).toEqual({ n: '5' });
    expect(decode('<p><n>5</n></p>', a)).toEqual({ n: 5 });
  });
});

describe('encodePayload', () => {
  it('round-trips by schema', () => {
    const value = {
      id: 42,
      price: 9.99,
      paid: false,
      note: 'Tom & Jerry <3 "quotes" \'apos\' ]]> done',
      tags: ['ünïcödé', '日本語', '😀'],
      qty: [1, 2, 3],
      customer: { name: 'Ada\nLovelace\r\n', vip: true },
      lines: [
        { sku: 'X1', n: 2 },
        { sku: 'Y<2>', n: 0 },
      ],
    };
    const xml = encodePayload('order', value, order);
    expect(xml).toContain('<note>Tom &amp; Jerry &lt;3 "quotes" \'apos\' ]]&gt; done</note>');
    expect(xml).toContain('<tags>ünïcödé</tags><tags>日本語</tags><tags>😀</tags>');
    expect(decode(xml)).toEqual(value);
  });

  it('writes properties in schema order, then the rest', () => {
    expect(encodePayload('order', { zzz: 1, note: 'n', id: 3 }, order)).toBe(
      '<order><id>3</id><note>n</note><zzz>1</zzz></order>',
    );
  });

  it('round-trips generically, with nested arrays, nulls and empty strings', () => {
    const xml = encodePayload('p', { a: 'x', m: [[1, 2], [3]], z: null, e: '', skip: undefined, o: {} });
    expect(xml).toBe('<p><a>x</a><m><item>1</item><item>2</item></m><m><item>3</item></m><z/><e/><o/></p>');
    const schema = {
      type: 'object',
      properties: {
        m: { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
        z: { type: 'null' },
        o: { type: 'object' },
      },
    };
    expect(decode(xml, schema)).toEqual({ a: 'x', m: [[1, 2], [3]], z: null, e: '', o: {} });
  });

  it('refuses names and values XML cannot carry', () => {
    const bad: [() => unknown, RegExp][] = [
      [() => encodePayload('p', { 'a b': 1 }), /"a b" cannot be an XML element name/],
      [() => encodePayload('1p', {}), /"1p" cannot be an XML element name/],
      [() => encodePayload('p', { n: Number.NaN }), /not a finite number/],
      [() => encodePayload('p', { f: () => 1 }), /function, which has no XML form/],
      [() => encodePayload('p', { s: 'a\u0000b' }), /U\+0000 cannot be represented/],
    ];
    for (const [fn, message] of bad) {
      expect(fn).toThrow(XmlError);
      expect(fn).toThrow(message);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodePayload('p', cyclic)).toThrow(/cyclic/);
  });
});

describe('encodePayload with an element bound', () => {
  const parsedCount = (xml: string) => parsePayload(xml, { ...L, maxElements: 1_000_000 }).node;
  const count = (node: ReturnType<typeof parsedCount>): number =>
    1 + node.children.reduce((n, c) => n + count(c), 0);

  it('counts what the parse counts, and refuses one more as it encodes', () => {
    const value = { a: 'x', b: ['', 'y', ['p', ['q']]], c: { d: 1, e: null }, f: [] as string[] };
    const xml = encodePayload('t', value);
    const elements = count(parsedCount(xml));
    expect(encodePayload('t', value, undefined, elements)).toBe(xml);
    let error: unknown;
    try {
      encodePayload('t', value, undefined, elements - 1);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(XmlError);
    expect(error).toMatchObject({
      code: 'xml.too_many_elements',
      message: `more than ${elements - 1} elements, the limit for one message (limits.max_xml_elements)`,
    });
  });

  it('stops at the bound: a million items are refused; the next call is unbounded again', () => {
    const items = Array.from({ length: 1_000_000 }, () => '');
    expect(() => encodePayload('list', { items }, undefined, 10_000)).toThrow(/more than 10000 elements/);
    // Unbounded after a bounded call threw.
    expect(encodePayload('list', { items: ['a', 'b'] })).toBe(
      '<list><items>a</items><items>b</items></list>',
    );
  });
});

describe('escaping', () => {
  it('escapes text and attributes so a parser reads back the same string', () => {
    const s = 'a & b < c > d " e \' f\tg\nh\ri';
    expect(escapeText(s)).toBe('a &amp; b &lt; c &gt; d " e \' f\tg\nh&#13;i');
    expect(escapeAttr(s)).toBe('a &amp; b &lt; c &gt; d &quot; e &apos; f&#9;g&#10;h&#13;i');
    expect(escapeText('plain')).toBe('plain');
    const node = parsePayload(`<x a="${escapeAttr(s)}" b='${escapeAttr(s)}'>${escapeText(s)}</x>`, L).node;
    expect(node.text).toBe(s);
    expect(node.attrs.a).toBe(s);
    expect(node.attrs.b).toBe(s);
  });
});
