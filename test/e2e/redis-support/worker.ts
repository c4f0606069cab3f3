import { defineListener } from '../../../src/index.ts';
import { jobPayload } from './job.ts';

/** Does "work" for WORKER_MS (default 100 ms) and answers which process did it. */
export default defineListener<{ n: number }>({
  description: 'Works on job n and says which daemon did it.',
  payload: jobPayload('work'),
  async handler(job, ctx) {
    await new Promise((r) => setTimeout(r, Number(process.env.WORKER_MS ?? 100)));
    return ctx.respond(`<done><n>${job.n}</n><pid>${process.pid}</pid></done>`);
  },
});
