import { defineTool } from 'organism';
import { z } from 'zod';

/** One customer as lookup_customer returns it. */
export interface Customer {
  id: string;
  name: string;
  plan: 'free' | 'pro' | 'enterprise';
}

/** What lookup_customer returns: the customer, or null when the address is unknown. */
export interface LookupResult {
  customer: Customer | null;
}

/**
 * The customer directory. A real organism would ask its CRM here (with fetch and ctx.signal); the
 * table keeps the example self-contained and its tests deterministic.
 */
const CUSTOMERS: Record<string, Customer> = {
  'ada@example.com': { id: 'C-1', name: 'Ada Lovelace', plan: 'enterprise' },
  'grace@example.com': { id: 'C-2', name: 'Grace Hopper', plan: 'pro' },
  'linus@example.org': { id: 'C-3', name: 'Linus Torvalds', plan: 'free' },
};

/** Looks a customer up by email address: the project's own tool, typed by its zod arguments. */
export default defineTool({
  name: 'lookup_customer',
  description:
    'Looks a customer up by email address and returns {"customer": {"id", "name", "plan"}}, or ' +
    '{"customer": null} when nobody has that address. Use it to know who wrote a ticket.',
  args: z.object({
    email: z.email().max(254).describe("The customer's email address."),
  }),
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run(args): Promise<LookupResult> {
    return { customer: CUSTOMERS[args.email.toLowerCase()] ?? null };
  },
});
