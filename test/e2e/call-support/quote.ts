import { defineListener } from '../../../src/index.ts';

/** Test listener: prices an order and replies with a typed quote (its response schema). */
export default defineListener<{ item: string; qty: number }>({
  description: 'Prices an order of an item and replies with the quote.',
  payload: {
    tag: 'quote-request',
    schema: {
      type: 'object',
      properties: {
        item: { type: 'string', minLength: 1, description: 'What to price.' },
        qty: { type: 'integer', minimum: 1, description: 'How many.' },
      },
      required: ['item', 'qty'],
      additionalProperties: false,
    },
  },
  response: {
    tag: 'quote',
    schema: {
      type: 'object',
      properties: {
        item: { type: 'string' },
        qty: { type: 'integer' },
        total: { type: 'number' },
        rush: { type: 'boolean' },
      },
      required: ['item', 'qty', 'total', 'rush'],
    },
  },
  handler: (payload, ctx) =>
    ctx.respond({ item: payload.item, qty: payload.qty, total: payload.qty * 1.5, rush: false }),
});
