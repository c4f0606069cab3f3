import { defineListener } from 'organism';

/** First hop of the hello-world organism: turns a name into a greeting for the shouter. */
export default defineListener<{ name: string }>({
  description: 'Greets someone by name and passes the greeting on to the shouter.',
  payload: {
    tag: 'greeting',
    schema: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 200, description: 'Who to greet.' } },
      required: ['name'],
      additionalProperties: false,
    },
  },
  handler: (payload, ctx) => ctx.send('shouter', { text: `Hello, ${payload.name}!` }),
});
