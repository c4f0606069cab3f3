import { defineListener } from '../../../src/index.ts';

/** Test listener: throws, with a secret the daemon knows (the admin token) in its message. */
export default defineListener<{ text: string }>({
  description: 'Fails on every message; for the failure records operators read.',
  payload: {
    tag: 'boom',
    schema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'Anything.' } },
      required: ['text'],
      additionalProperties: false,
    },
  },
  handler(payload) {
    throw new RangeError(`ledger ${payload.text} is closed (token ${process.env.TEST_ADMIN_TOKEN})`);
  },
});
