import { describe, expect, it } from 'vitest';
import { PayloadValidationError, SchemaError } from '../../src/errors.ts';
import { decodePayload } from '../../src/xml/codec.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';
import { DEFAULT_XML_LIMITS as L } from '../../src/xml/limits.ts';
import { parsePayload } from '../../src/xml/parse.ts';
import { compileValidator } from '../../src/xml/validate.ts';

const schema: JsonSchema = {
  type: 'object',
  properties: {
    text: { type: 'string', minLength: 1 },
    count: { type: 'integer', minimum: 1, default: 1 },
    mood: { enum: ['calm', 'loud'] },
    email: { type: 'string', format: 'email' },
    items: {
      type: 'array',
      items: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    },
  },
  required: ['text'],
  additionalProperties: false,
};

function check(xml: string): PayloadValidationError | null {
  const node = parsePayload(xml, L).node;
  return compileValidator('shout', schema)(decodePayload(node, schema));
}

describe('compileValidator', () => {
  it('accepts a valid payload and fills defaults', () => {
    const value = decodePayload(parsePayload('<shout><text>hi</text></shout>', L).node, schema);
    expect(compileValidator('shout', schema)(value)).toBeNull();
    expect(value).toEqual({ text: 'hi', count: 1 });
  });

  it('names the field and what was expected', () => {
    const cases: [string, string, string][] = [
      ['<shout/>', 'text', '<shout> missing required field "text"'],
      [
        '<shout><text>hi</text><count>many</count></shout>',
        'count',
        '<shout> field "count": must be integer (got a string)',
      ],
      ['<shout><text>hi</text><count>0</count></shout>', 'count', '<shout> field "count": must be >= 1'],
      [
        '<shout><text>hi</text><mood>angry</mood></shout>',
        'mood',
        '<shout> field "mood": must be one of "calm", "loud"',
      ],
      [
        '<shout><text>hi</text><colour>red</colour></shout>',
        'colour',
        '<shout> unknown field "colour" (the schema does not allow it)',
      ],
      [
        '<shout><text>hi</text><email>nope</email></shout>',
        'email',
        '<shout> field "email": must match format "email"',
      ],
      [
        '<shout><text>a</text><text>b</text></shout>',
        'text',
        '<shout> field "text": must be string (got an array)',
      ],
      [
        '<shout><text>hi</text><items><n>1</n></items><items><m>2</m></items></shout>',
        'items[1].n',
        // The field the sender gave instead, which the schema does not name.
        '<shout> missing required field "items[1].n"; unknown field "m"',
      ],
      [
        '<shout><text>hi</text><items><n>x</n></items></shout>',
        'items[0].n',
        '<shout> field "items[0].n": must be integer (got a string)',
      ],
    ];
    for (const [xml, path, message] of cases) {
      const err = check(xml);
      expect(err, xml).toBeInstanceOf(PayloadValidationError);
      expect(err!.code).toBe('payload.invalid');
      expect(err!.message, xml).toBe(message);
      expect(err!.details).toEqual({ tag: 'shout', path, fields: [{ path, message: message.slice(8) }] });
    }
  });

  it('lists every missing or wrong field, not only the first', () => {
    const order = {
      type: 'object',
      properties: {
        customer: { type: 'string' },
        item: { type: 'string' },
        qty: { type: 'integer', minimum: 1 },
        rush: { type: 'boolean' },
      },
      required: ['customer', 'item', 'qty'],
      additionalProperties: false,
    };
    const err = compileValidator('order', order)({ itme: 'pen', qty: 0, rush: 'yes' });
    expect(err!.message).toBe(
      '<order> missing required field "customer"; ' +
        'missing required field "item"; unknown field "itme": did you mean "item"?; ' +
        'field "qty": must be >= 1; field "rush": must be boolean (got a string)',
    );
    expect(err!.details).toMatchObject({
      tag: 'order',
      path: 'customer',
      fields: [
        { path: 'customer' },
        { path: 'item' },
        { path: 'qty', message: 'field "qty": must be >= 1' },
        { path: 'rush', message: 'field "rush": must be boolean (got a string)' },
      ],
    });
  });

  it('lists at most 20 problems, then how many more', () => {
    const wide = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, { type: 'integer' }])),
      required: Array.from({ length: 30 }, (_, i) => `f${i}`),
    };
    const err = compileValidator('wide', wide)({});
    expect(err!.message.match(/missing required field/g)).toHaveLength(20);
    expect(err!.message).toMatch(/; and 10 more$/);
    expect((err!.details as { fields: unknown[] }).fields).toHaveLength(20);
  });

  it('does not echo the offending value', () => {
    const err = check('<shout><text>hi</text><count>hunter2-secret</count></shout>');
    expect(err!.message).not.toContain('hunter2');
  });

  it('reuses the compiled validator for the same schema object', () => {
    const s = { type: 'object', properties: { a: { type: 'string' } } };
    const v1 = compileValidator('a', s);
    const v2 = compileValidator('b', s);
    expect(v1({ a: 1 })!.message).toMatch(/^<a> /);
    expect(v2({ a: 1 })!.message).toMatch(/^<b> /);
    expect(v1({ a: 'x' })).toBeNull();
  });

  it('throws SchemaError for a schema ajv refuses', () => {
    expect(() => compileValidator('bad', { type: 'no-such-type' })).toThrow(SchemaError);
    expect(() => compileValidator('bad', { type: 'no-such-type' })).toThrow(
      /payload schema for <bad> is invalid/,
    );
  });
});
