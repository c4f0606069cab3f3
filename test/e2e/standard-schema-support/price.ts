import { z } from 'zod';
import { defineTool } from '../../../src/index.ts';

/** Test tool declared with zod: its default currency is filled by the schema before run. */
export default defineTool({
  name: 'price',
  description: 'Prices qty items.',
  args: z.object({
    item: z.string(),
    qty: z.number().int().positive(),
    currency: z.enum(['EUR', 'USD']).default('EUR'),
  }),
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run(args) {
    return { total: args.qty * 1.5, currency: args.currency };
  },
});
