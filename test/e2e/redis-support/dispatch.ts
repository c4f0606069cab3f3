import { defineListener } from '../../../src/index.ts';

/** First hop of the scale-out tests: passes job n on to the listener its kind names. */
export default defineListener<{ n: number; kind: 'work' | 'mail' | 'crash' }>({
  description: 'Passes a job on to the worker, the mailer or the crasher.',
  payload: {
    tag: 'job',
    schema: {
      type: 'object',
      properties: { n: { type: 'integer' }, kind: { enum: ['work', 'mail', 'crash'] } },
      required: ['n', 'kind'],
      additionalProperties: false,
    },
  },
  async handler(job, ctx) {
    await new Promise((r) => setTimeout(r, 20));
    const to = job.kind === 'mail' ? 'mailer' : job.kind === 'crash' ? 'crasher' : 'worker';
    return ctx.send(to, { n: job.n });
  },
});
