/**
 * Type tests (checked by `npm run typecheck`, which covers test/): a listener's and a tool's types
 * come from their schemas (zod, or a JSON Schema literal), interfaces compile wherever type aliases
 * do, and a real mismatch is still an error. Without the file `organism types` writes, tool and
 * peer names stay any string (test/cli/types.test.ts covers the generated file).
 */
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  defineListener,
  defineTool,
  type HandlerContext,
  type Infer,
  type ListenerDefinition,
  type ToolResult,
} from '../../src/index.ts';
import { testListener } from '../../src/testing/index.ts';

const Order = z.object({ item: z.string(), qty: z.number().int(), note: z.string().default('none') });

/** Declared as an interface: no index signature. */
interface Quote {
  item: string;
  total: number;
}

describe('types from schemas', () => {
  it("a zod payload: the handler gets zod's output, senders give its input", () => {
    const order = defineListener({
      payload: { tag: 'order', schema: Order },
      response: { tag: 'quote', schema: z.object({ item: z.string(), total: z.number() }) },
      handler(payload, ctx) {
        expectTypeOf(payload).toEqualTypeOf<{ item: string; qty: number; note: string }>();
        // @ts-expect-error a field the payload does not have
        payload.price;
        // @ts-expect-error the response's field has the wrong type
        ctx.respond({ item: payload.item, total: 'many' });
        // @ts-expect-error a field the response lacks
        ctx.respond({ item: payload.item });
        return ctx.respond({ item: payload.item, total: payload.qty * 2 });
      },
    });
    expectTypeOf(order['~input']).toEqualTypeOf<
      { item: string; qty: number; note?: string | undefined } | undefined
    >();
  });

  it('a JSON Schema literal written inline or as const types the payload', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        level: { enum: ['low', 'high'] },
        count: { type: 'integer', default: 1 },
      },
      required: ['name'],
    } as const;
    expectTypeOf<Infer<typeof schema>>().toEqualTypeOf<{
      name: string;
      count: number;
      tags?: string[];
      level?: 'low' | 'high';
    }>();
    defineListener({
      payload: {
        tag: 'inline',
        schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      },
      handler(payload) {
        expectTypeOf(payload).toEqualTypeOf<{ n: number }>();
      },
    });
  });

  it('given types win over the schema, interfaces included; the loose default stays for untyped schemas', () => {
    const quoted = defineListener<{ item: string }, Quote>({
      payload: { tag: 'ask', schema: { type: 'object' } },
      handler: (payload, ctx) => ctx.respond({ item: payload.item, total: 1 }),
    });
    expectTypeOf(quoted).toMatchTypeOf<ListenerDefinition<{ item: string }, Quote>>();
    const loose = defineListener({
      payload: { tag: 'loose', schema: {} as Record<string, unknown> },
      handler(payload, ctx) {
        expectTypeOf(payload).toEqualTypeOf<Record<string, unknown>>();
        // No organism-env.d.ts: any tool and any peer, as before.
        void ctx.tools.call('anything', { x: 1 });
        void ctx.send('anyone', '<x/>');
      },
    });
    expectTypeOf(loose).toMatchTypeOf<ListenerDefinition>();
  });

  it('a listener with an interface response type goes to testListener and to peers (no TS2345)', async () => {
    const quoting = defineListener<{ item: string }, Quote>({
      payload: { tag: 'ask', schema: { type: 'object' } },
      handler: (payload, ctx) => ctx.respond({ item: payload.item, total: 1 }),
    });
    const zodQuoting = defineListener({
      payload: { tag: 'ask2', schema: Order },
      response: { tag: 'q2', schema: z.object({ item: z.string() }) },
      handler: (payload, ctx) => ctx.respond({ item: payload.item }),
    });
    // Types only: never called.
    const typesOnly = () => [
      testListener(quoting, { peers: { quoting, zodQuoting } }),
      testListener(zodQuoting),
    ];
    expectTypeOf(typesOnly).returns.toBeArray();
    const ctx = {} as HandlerContext<Quote>;
    // @ts-expect-error total must be a number
    if (Math.random() > 2) ctx.respond({ item: 'x', total: '1' });
  });

  it("defineTool: run's arguments from the schema, the result from what run returns", () => {
    const tool = defineTool({
      name: 'count',
      description: 'Counts words.',
      args: z.object({ text: z.string(), min: z.number().default(0) }),
      readOnly: true,
      capability: 'read',
      source: 'native',
      async run(args) {
        expectTypeOf(args).toEqualTypeOf<{ text: string; min: number }>();
        return { words: args.text.split(' ').length };
      },
    });
    expectTypeOf(tool['~input']).toEqualTypeOf<{ text: string; min?: number | undefined } | undefined>();
    expectTypeOf(tool.run).returns.resolves.toEqualTypeOf<{ words: number }>();
    defineTool({
      name: 'json_args',
      description: 'Takes a JSON Schema literal.',
      args: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      readOnly: true,
      capability: 'read',
      source: 'native',
      async run(args) {
        expectTypeOf(args).toEqualTypeOf<{ path: string }>();
        // @ts-expect-error not in the schema
        args.mode;
        return null;
      },
    });
    // A result cut at max_result_bytes is JSON text, flagged truncated.
    const result = {} as ToolResult<{ words: number }>;
    if (result.status === 'ok' && !result.truncated)
      expectTypeOf(result.value).toEqualTypeOf<{ words: number }>();
  });
});
