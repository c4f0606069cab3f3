import { defineListener } from 'organism';

/** A listener offered as an MCP tool (mcp: true): a call starts a thread and returns its reply. */
export default defineListener<{ text: string }>({
  description: 'Answers with the text it was given.',
  payload: {
    tag: 'echo',
    schema: {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 10_000, description: 'What to echo.' } },
      required: ['text'],
      additionalProperties: false,
    },
  },
  handler: (payload, ctx) => ctx.respond({ text: payload.text }),
});
