import { defineListener } from 'organism';
import { z } from 'zod';
import type { LookupResult } from '../tools/lookup-customer.ts';

/** Words that make a ticket billing's; every other ticket goes to support. */
const BILLING = /\b(invoices?|refunds?|charged?|charges|payments?|billing|subscriptions?|vat)\b/i;

/** What billing and support answer with (their `response`), and so what triage passes on. */
export const Accepted = z.object({
  ticket: z.string(),
  team: z.enum(['billing', 'support']),
  priority: z.enum(['normal', 'high']),
  reference: z.string(),
});

/**
 * Reads an incoming ticket, looks its sender up with lookup_customer, and routes it: to billing
 * when it is about money, to support otherwise; an enterprise customer's ticket is high priority.
 * It answers its caller with where the ticket went and the team's reference.
 */
export default defineListener({
  name: 'triage',
  description: 'Classifies an incoming support ticket and routes it to billing or support.',
  payload: {
    tag: 'ticket',
    schema: z.object({
      id: z.string().min(1).max(64).describe('The ticket id, e.g. T-1042.'),
      from: z.email().max(254).describe("The sender's email address."),
      subject: z.string().min(1).max(200).describe('The subject line.'),
      body: z.string().max(20_000).default('').describe('The text of the ticket.'),
    }),
  },
  response: { tag: 'routed', schema: Accepted },
  async handler(ticket, ctx) {
    const found = await ctx.tools.call('lookup_customer', { email: ticket.from });
    // A refused or failed lookup is a result, not an exception: route the ticket anyway.
    const { customer } = found.status === 'ok' ? (found.value as LookupResult) : { customer: null };
    if (found.status !== 'ok') ctx.log.warn('lookup failed', { code: found.error.code });
    const team = BILLING.test(`${ticket.subject}\n${ticket.body}`) ? 'billing' : 'support';
    return ctx.send(team, {
      ticket: ticket.id,
      customer: customer?.name ?? `unknown (${ticket.from})`,
      priority: customer?.plan === 'enterprise' ? 'high' : 'normal',
      summary: ticket.subject,
    });
  },
  // The team's answer (or a <huh>/<SystemError> if it failed) comes back here.
  onReply(reply, ctx) {
    if (reply.kind !== 'response') throw new Error(`the team could not take the ticket: ${reply.xml}`);
    return ctx.respond(Accepted.parse(reply.payload));
  },
});
