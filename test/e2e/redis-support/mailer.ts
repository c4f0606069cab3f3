import { defineListener } from '../../../src/index.ts';
import { jobPayload } from './job.ts';

/** Sends one e-mail for job n through send_email, then works on for a while before answering. */
export default defineListener<{ n: number }>({
  description: 'Mails ops about job n.',
  payload: jobPayload('mail'),
  async handler(job, ctx) {
    const result = await ctx.tools.call('send_email', {
      to: 'ops@example.com',
      subject: `job ${job.n}`,
      body: `job ${job.n} is done`,
    });
    await new Promise((r) => setTimeout(r, 300));
    const detail = result.status === 'ok' ? '' : result.error.code;
    return ctx.respond(
      `<done><n>${job.n}</n><pid>${process.pid}</pid><mail>${result.status}${detail ? ` ${detail}` : ''}</mail></done>`,
    );
  },
});
