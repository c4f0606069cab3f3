import { appendFileSync } from 'node:fs';
import { defineListener } from '../../../src/index.ts';

/**
 * Test listener for the effects-once test: notes that it started (`start <n>`), calls the webhook
 * tool (URL from DURABILITY_HOOK_URL), notes its answer (`called <n> <status code or error code>`),
 * sleeps DURABILITY_SLEEP_MS, and notes that it finished (`done <n> <the same>`), all in the file
 * DURABILITY_RECORD.
 */
export default defineListener<{ n: number }>({
  description: 'Calls a webhook per job, then takes its time; for the crash-recovery tests.',
  payload: {
    tag: 'hook-job',
    schema: {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 0, description: 'Job number.' } },
      required: ['n'],
      additionalProperties: false,
    },
  },
  async handler(payload, ctx) {
    const record = process.env.DURABILITY_RECORD!;
    appendFileSync(record, `start ${payload.n}\n`);
    const result = await ctx.tools.call('webhook', {
      url: process.env.DURABILITY_HOOK_URL,
      payload: { n: payload.n },
    });
    const outcome =
      result.status === 'ok'
        ? String((result.value as { status_code: number }).status_code)
        : result.error.code;
    appendFileSync(record, `called ${payload.n} ${outcome}\n`);
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.DURABILITY_SLEEP_MS ?? 0)));
    appendFileSync(record, `done ${payload.n} ${outcome}\n`);
  },
});
