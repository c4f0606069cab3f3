import { appendFileSync } from 'node:fs';
import { defineListener } from '../../../src/index.ts';
import { jobPayload } from './job.ts';

/**
 * A long handler for the failover and shutdown tests: notes in SLEEPER_LOG (one JSON line: job n,
 * this process's pid, the time) the moment it starts job n, then works for SLEEPER_MS (default
 * 60 s, longer than any of those tests looks).
 */
export default defineListener<{ n: number }>({
  description: 'Notes when it starts job n, then works on it for a long time.',
  payload: jobPayload('nap'),
  async handler(job, ctx) {
    const log = process.env.SLEEPER_LOG;
    if (log) appendFileSync(log, `${JSON.stringify({ n: job.n, pid: process.pid, at: Date.now() })}\n`);
    await new Promise((r) => setTimeout(r, Number(process.env.SLEEPER_MS ?? 60_000)));
    return ctx.respond(`<rested><n>${job.n}</n></rested>`);
  },
});
