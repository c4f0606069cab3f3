import { z } from 'zod';
import { defineListener } from '../../../src/index.ts';

/**
 * Test listener declared with zod only: prices an order with the price tool (zod args too) and
 * replies with a zod-typed quote. `note` has a default, so the handler sees it filled.
 */
export default defineListener({
  name: 'order',
  description: 'Prices an order.',
  payload: {
    tag: 'order',
    schema: z.object({
      item: z.string().min(1).describe('What to price.'),
      qty: z.number().int().min(1).max(99),
      code: z
        .string()
        .regex(/^[A-Z]{3}-[0-9]{2}$/)
        .optional(),
      note: z.string().default('none'),
    }),
  },
  response: {
    tag: 'order-quote',
    schema: z.object({ item: z.string(), total: z.number(), currency: z.string(), note: z.string() }),
  },
  async handler(payload, ctx) {
    const priced = await ctx.tools.call('price', payload.item === 'bad-args' ? { qty: -1 } : payload);
    if (priced.status !== 'ok') throw new Error(`price: ${priced.error.message}`);
    const { total, currency } = priced.value as { total: number; currency: string };
    return ctx.respond({ item: payload.item, total, currency, note: payload.note });
  },
});
