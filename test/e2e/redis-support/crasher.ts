import { defineListener } from '../../../src/index.ts';
import { jobPayload } from './job.ts';

/**
 * A poison message's handler: it takes its whole daemon down (an uncaught exception), every time,
 * so the message is never acknowledged. Only the dead-letter limit stops it going round.
 */
export default defineListener<{ n: number }>({
  description: 'Crashes the daemon that handles it.',
  payload: jobPayload('crash'),
  handler() {
    setImmediate(() => {
      throw new Error('poison message: this handler crashes its daemon');
    });
    return new Promise(() => {});
  },
});
