import { defineListener } from '../../../src/index.ts';
import { textPayload } from './text-payload.ts';

/**
 * Test listener with a bug many handlers have: a promise it starts and never awaits, which rejects
 * after the handler has answered (with a secret the daemon knows in its message).
 */
export default defineListener<{ text: string }>({
  description: 'Starts work it never awaits; the work fails later.',
  payload: textPayload('float'),
  handler(payload) {
    void new Promise((_, reject) =>
      setTimeout(
        () => reject(new Error(`sync of ${payload.text} failed (token ${process.env.TEST_ADMIN_TOKEN})`)),
        10,
      ),
    );
  },
});
