import { defineListener } from '../../../src/index.ts';

/** Test listener: its handler always throws, so its caller gets a SystemError. */
export default defineListener<{ text: string }>({
  description: 'Always fails; for the failure answers of a call.',
  payload: {
    tag: 'break',
    schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  handler: (payload) => {
    throw new TypeError(`boom on ${payload.text}`);
  },
});
