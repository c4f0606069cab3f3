import { defineListener } from 'organism';

/**
 * Calls one native tool on request and answers with its result: a way to try tools through the
 * bus (the call and the result are both messages in the thread). Arguments are JSON text.
 */
export default defineListener<{ tool: string; args?: string }>({
  description: 'Calls one granted tool with JSON arguments and answers with the result.',
  payload: {
    tag: 'use-tool',
    schema: {
      type: 'object',
      properties: {
        tool: {
          type: 'string',
          minLength: 1,
          maxLength: 100,
          description: 'Name of the tool, e.g. calculate.',
          examples: ['calculate'],
        },
        args: {
          type: 'string',
          maxLength: 100_000,
          description: 'The arguments as a JSON object.',
          examples: ['{"expression": "2 ** 10"}'],
        },
      },
      required: ['tool'],
      additionalProperties: false,
    },
  },
  response: {
    tag: 'tool-answer',
    schema: {
      type: 'object',
      properties: { tool: { type: 'string' }, status: { type: 'string' }, result: { type: 'string' } },
    },
  },
  async handler(payload, ctx) {
    let args: unknown;
    try {
      args = JSON.parse(payload.args ?? '{}');
    } catch (error) {
      return ctx.respond({
        tool: payload.tool,
        status: 'error',
        result: `args is not JSON: ${(error as Error).message}`,
      });
    }
    const result = await ctx.tools.call(payload.tool, args);
    const body = result.status === 'ok' ? result.value : result.error;
    return ctx.respond({ tool: payload.tool, status: result.status, result: JSON.stringify(body) });
  },
});
