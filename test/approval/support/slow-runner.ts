import { appendFileSync } from 'node:fs';
import { defineListener } from '../../../src/index.ts';

/**
 * Test listener for the approval-and-restart test: notes that it started (`start`), runs the
 * command through run_command (which waits for approval), sleeps APPROVAL_SLEEP_MS, notes how the
 * call went (`done <status>`) in the file APPROVAL_RECORD, and answers with the status.
 */
export default defineListener<{ command: string }>({
  description: 'Runs one command, then takes its time; for the approval restart tests.',
  payload: {
    tag: 'slow-run',
    schema: {
      type: 'object',
      properties: { command: { type: 'string', description: 'The command.' } },
      required: ['command'],
      additionalProperties: false,
    },
  },
  response: {
    tag: 'slow-run-done',
    schema: { type: 'object', properties: { status: { type: 'string' } } },
  },
  async handler(payload, ctx) {
    const record = process.env.APPROVAL_RECORD!;
    appendFileSync(record, 'start\n');
    const result = await ctx.tools.call('run_command', { command: payload.command });
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.APPROVAL_SLEEP_MS ?? 0)));
    appendFileSync(record, `done ${result.status}\n`);
    return ctx.respond({ status: result.status });
  },
});
