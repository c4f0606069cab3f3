import { defineListener } from 'organism';
import { z } from 'zod';
import { Accepted } from './triage.ts';

/** What triage sends a team. */
const Assignment = z.object({
  ticket: z.string().min(1).max(64),
  customer: z.string().max(300),
  priority: z.enum(['normal', 'high']),
  summary: z.string().max(200),
});

/**
 * A team's queue: takes a ticket triage routed to it and answers with a reference. billing.ts and
 * support.ts are two of these; a real team would file the ticket in its tracker here.
 */
export function team(name: 'billing' | 'support', prefix: string) {
  let next = 1;
  return defineListener({
    name,
    description: `The ${name} team's queue: takes a routed ticket and answers with a reference.`,
    payload: { tag: `${name}-ticket`, schema: Assignment },
    response: { tag: 'accepted', schema: Accepted },
    handler(assignment, ctx) {
      const reference = `${prefix}-${String(next++).padStart(4, '0')}`;
      ctx.log.info('ticket taken', { ticket: assignment.ticket, reference });
      return ctx.respond({ ticket: assignment.ticket, team: name, priority: assignment.priority, reference });
    },
  });
}
