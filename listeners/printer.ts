import { defineListener } from 'organism';

/** Last hop: prints to the daemon's log and ends the chain. */
export default defineListener<{ text: string; source?: string }>({
  description: 'Prints a line of text to the console of the daemon; the end of a chain.',
  payload: {
    tag: 'print',
    schema: {
      type: 'object',
      properties: {
        text: { type: 'string', maxLength: 10_000, description: 'What to print.' },
        source: { type: 'string', maxLength: 200, description: 'Who produced the text.' },
      },
      required: ['text'],
      additionalProperties: false,
    },
  },
  handler: (payload, ctx) => {
    ctx.log.info(`[${payload.source ?? ctx.from}] ${payload.text}`, { printed: payload.text });
  },
});
