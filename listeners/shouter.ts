import { defineListener } from 'organism';

/** Second hop: shouts whatever it is given and hands it to the printer. */
export default defineListener<{ text: string }>({
  description: 'Shouts a line of text in capitals and passes it on to the printer.',
  payload: {
    tag: 'shout',
    schema: {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 10_000, description: 'The text to shout.' } },
      required: ['text'],
      additionalProperties: false,
    },
  },
  handler: (payload, ctx) => ctx.send('printer', { text: payload.text.toUpperCase(), source: ctx.self }),
});
