/**
 * A Standard Schema where Organism reads JSON Schema: its form comes from the schema itself (zod)
 * or from an adapter registered for its vendor, tidied for readers; a schema with neither, or a
 * conversion that fails, is a SchemaFormError naming its owner. Checks run the schema's own
 * validate, sync or async, and list every issue with its field.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFunctions } from '../../src/agent/definition.ts';
import { SchemaFormError } from '../../src/errors.ts';
import {
  defineListener,
  defineTool,
  registerJsonSchemaAdapter,
  type StandardSchemaV1,
} from '../../src/index.ts';
import { standardPayloadCheck } from '../../src/schema/check.ts';
import { jsonSchemaForm } from '../../src/schema/json-form.ts';
import { testConfig } from '../../src/testing/index.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { schemaToPrompt } from '../../src/xml/describe.ts';

/** A schema of a library with no converter of its own: accepts objects with a string `x`. */
function acme(validate?: StandardSchemaV1['~standard']['validate']): StandardSchemaV1 {
  return {
    '~standard': {
      version: 1,
      vendor: 'acme-test',
      validate:
        validate ??
        ((value) =>
          typeof (value as { x?: unknown })?.x === 'string'
            ? { value: value as { x: string } }
            : { issues: [{ message: 'must be a string', path: ['x'] }] }),
    },
  };
}

const ADAPTERS = Symbol.for('organism.json-schema-adapters');
afterEach(() => {
  (globalThis as Record<symbol, Map<string, unknown> | undefined>)[ADAPTERS]?.delete('acme-test');
});

describe('the JSON Schema form', () => {
  it("zod's own converter, without $schema and zod's safe-integer bounds, with real bounds kept", () => {
    const form = jsonSchemaForm(z.object({ n: z.number().int().min(2), m: z.number().int() }), 'test');
    expect(form).toEqual({
      type: 'object',
      properties: { n: { type: 'integer', minimum: 2 }, m: { type: 'integer' } },
      required: ['n', 'm'],
    });
  });

  it('a schema with no converter and no adapter is a SchemaFormError naming its owner and the fix', () => {
    let error: unknown;
    try {
      jsonSchemaForm(acme(), "tool t's args");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SchemaFormError);
    expect((error as SchemaFormError).code).toBe('schema.no_json_form');
    expect((error as Error).message).toContain("tool t's args: its acme-test schema has no JSON Schema form");
    expect((error as Error).message).toContain(
      "registerJsonSchemaAdapter({ vendor: 'acme-test', toJsonSchema })",
    );
  });

  it("an adapter registered for the vendor gives the form; a failing or async one is the owner's error", () => {
    registerJsonSchemaAdapter({
      vendor: 'acme-test',
      toJsonSchema: () => ({ type: 'object', properties: { x: { type: 'string' } }, required: ['x'] }),
    });
    const listener = defineListener({
      name: 'acme',
      payload: { tag: 'acme', schema: acme() },
      handler: () => {},
    });
    expect(listener.payload.schema).toEqual({
      type: 'object',
      properties: { x: { type: 'string' } },
      required: ['x'],
    });
    expect(schemaToPrompt(listener.payload, 'acme', 'd')).toContain('x');

    registerJsonSchemaAdapter({
      vendor: 'acme-test',
      toJsonSchema: () => {
        throw new Error('dates have no JSON form');
      },
    });
    expect(() => jsonSchemaForm(acme(), 'payload <acme>')).toThrow(
      'payload <acme>: its acme-test schema does not convert to JSON Schema: dates have no JSON form',
    );
    registerJsonSchemaAdapter({ vendor: 'acme-test', toJsonSchema: (async () => ({})) as never });
    expect(() => jsonSchemaForm(acme(), 'payload <acme>')).toThrow('a synchronous toJsonSchema is needed');
    expect(() => registerJsonSchemaAdapter({ vendor: '', toJsonSchema: () => ({}) })).toThrow(
      'registerJsonSchemaAdapter needs { vendor: string, toJsonSchema(schema) }',
    );
  });

  it("a zod tool's args reach LLM tool definitions as JSON Schema; the registry names a tool without a form", () => {
    const registry = new ToolRegistry();
    const tool = defineTool({
      name: 'greet',
      description: 'Greets someone by name.',
      args: z.object({ who: z.string().describe('Who.'), loud: z.boolean().default(false) }),
      readOnly: true,
      capability: 'read',
      source: 'native',
      run: async ({ who, loud }) => (loud ? who.toUpperCase() : who),
    });
    registry.register(tool);
    const [fn] = agentFunctions(
      testConfig({ listeners: [{ name: 'a', agent: true, tools: ['greet'] }] }).listeners[0]!,
      {
        tools: (name) => registry.get(name)?.definition,
        peers: () => undefined,
      },
    );
    expect(fn?.parameters).toMatchObject({
      type: 'object',
      properties: { who: { type: 'string', description: 'Who.' }, loud: { type: 'boolean', default: false } },
      required: ['who'],
    });
    expect(() => registry.register({ ...tool, name: 'formless', args: acme() } as never)).toThrow(
      /formless.*its acme-test schema has no JSON Schema form/,
    );
  });
});

describe("a payload checked by its Standard Schema's own validate", () => {
  it('lists every issue with its field, and gives back the output', async () => {
    const check = standardPayloadCheck(
      't',
      z.object({ a: z.string(), b: z.array(z.object({ c: z.number() })) }),
    );
    const verdict = await check({ a: 1, b: [{ c: 'x' }] });
    expect(verdict).toBeInstanceOf(Error);
    expect((verdict as Error).message).toBe(
      '<t> field "a": Invalid input: expected string, received number; field "b[0].c": Invalid input: expected number, received string',
    );
    expect(await standardPayloadCheck('t', z.object({ a: z.string().default('d') }))({})).toEqual({
      value: { a: 'd' },
    });
  });

  it('an async check settles later; a throwing one is a refusal, not a crash', async () => {
    const slow = standardPayloadCheck(
      't',
      acme(async (value) => ({ issues: [{ message: `no ${JSON.stringify(value)}` }] })),
    );
    const pending = slow({ x: 1 });
    expect(pending).toBeInstanceOf(Promise);
    expect(((await pending) as Error).message).toBe('<t> payload: no {"x":1}');
    const throwing = standardPayloadCheck(
      't',
      acme(() => {
        throw new Error('kaput');
      }),
    );
    expect((throwing({}) as Error).message).toBe('<t> the schema failed: kaput');
  });
});
