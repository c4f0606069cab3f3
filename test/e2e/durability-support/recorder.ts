import { appendFileSync } from 'node:fs';
import { defineListener } from '../../../src/index.ts';

/**
 * Test listener for the crash tests: sleeps DURABILITY_SLEEP_MS (so work is still queued or running
 * when the daemon is killed), then appends `<thread> <n>` to the file DURABILITY_RECORD.
 */
export default defineListener<{ n: number }>({
  description: 'Records each job it finishes to a file; for the crash-recovery tests.',
  payload: {
    tag: 'job',
    schema: {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 0, description: 'Job number.' } },
      required: ['n'],
      additionalProperties: false,
    },
  },
  async handler(payload, ctx) {
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.DURABILITY_SLEEP_MS ?? 0)));
    appendFileSync(process.env.DURABILITY_RECORD!, `${ctx.thread} ${payload.n}\n`);
  },
});
