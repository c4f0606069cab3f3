import { defineListener } from '../../../src/index.ts';
import { textPayload } from './text-payload.ts';

/** Test listener: throws, with a secret the daemon knows (the admin token) in its message. */
export default defineListener<{ text: string }>({
  description: 'Fails on every message; for the failure records operators read.',
  payload: textPayload('boom'),
  handler(payload) {
    throw new RangeError(`ledger ${payload.text} is closed (token ${process.env.TEST_ADMIN_TOKEN})`);
  },
});
