import { defineListener } from '../../../src/index.ts';

/** Calls client_probe inside its own thread: the tool must find the MCP client of the call. */
export default defineListener<{ mode: string }>({
  description: 'Runs client_probe in its thread and answers with what it returned.',
  payload: {
    tag: 'relay',
    schema: {
      type: 'object',
      properties: { mode: { type: 'string', enum: ['notify', 'sample'] } },
      required: ['mode'],
      additionalProperties: false,
    },
  },
  response: {
    tag: 'relayed',
    schema: { type: 'object', properties: { result: { type: 'string' } }, required: ['result'] },
  },
  handler: async (payload, ctx) => {
    const result = await ctx.tools.call('client_probe', { mode: payload.mode });
    return ctx.respond({ result: JSON.stringify(result) });
  },
});
