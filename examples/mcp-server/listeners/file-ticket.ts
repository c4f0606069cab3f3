import { defineListener } from 'organism';
import { z } from 'zod';

/**
 * Files a ticket: offered to MCP clients as a tool (mcp: true in organism.yaml), so a client's call
 * starts a thread here and gets the reply. It keeps the ticket with the built-in key_value_set.
 */
export default defineListener({
  name: 'file_ticket',
  description: 'Files a help desk ticket for a person to follow up, and answers with its id.',
  payload: {
    tag: 'file-ticket',
    schema: z.object({
      subject: z.string().min(1).max(200).describe('One line saying what is wrong.'),
      body: z.string().max(10_000).default('').describe('Everything else the team should know.'),
    }),
  },
  response: { tag: 'ticket-filed', schema: z.object({ id: z.string() }) },
  async handler(ticket, ctx) {
    const id = `T-${ctx.thread.slice(0, 8)}`;
    const kept = await ctx.tools.call('key_value_set', { key: id, value: JSON.stringify(ticket) });
    if (kept.status !== 'ok') throw new Error(`key_value_set: ${kept.error.message}`);
    return ctx.respond({ id });
  },
});
