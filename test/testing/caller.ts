/**
 * A listener for tests of the kit's tools: it makes the tool call it is sent
 * (`<call><tool>..</tool><args>{json}</args></call>`) and answers with the result as JSON text, which
 * is what a handler (or an agent) reads of a call.
 */
import { defineListener } from '../../src/index.ts';
import type { TestedListener } from '../../src/testing/index.ts';

export const caller = defineListener<{ tool: string; args: string }>({
  payload: {
    tag: 'call',
    schema: {
      type: 'object',
      properties: { tool: { type: 'string' }, args: { type: 'string' } },
      required: ['tool', 'args'],
    },
  },
  response: {
    tag: 'result',
    schema: { type: 'object', properties: { json: { type: 'string' } }, required: ['json'] },
  },
  async handler(p, ctx) {
    const result = await ctx.tools.call(p.tool, JSON.parse(p.args));
    return ctx.respond({ json: JSON.stringify(result) });
  },
});

/** The tool's result as the calling handler read it. */
export async function call(t: TestedListener, tool: string, args: unknown): Promise<any> {
  const [reply] = await t.send({ tool, args: JSON.stringify(args) });
  if (reply?.kind !== 'response') throw new Error(`no result: ${JSON.stringify(reply)}`);
  return JSON.parse(String(reply.payload.json));
}
