import { defineListener } from '../../../src/index.ts';
import { textPayload } from './text-payload.ts';

/**
 * Test listener whose work throws outside any promise (a timer's callback), after the handler has
 * answered, with a secret the daemon knows in its message.
 */
export default defineListener<{ text: string }>({
  description: 'Sets a timer whose callback throws.',
  payload: textPayload('tick'),
  handler(payload) {
    setTimeout(() => {
      throw new Error(`timer of ${payload.text} broke (token ${process.env.TEST_ADMIN_TOKEN})`);
    }, 10);
  },
});
