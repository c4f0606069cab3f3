import { defineListener } from '../../../src/index.ts';

/** Test listener: sleeps `ms` (or until its signal aborts: a kill), then replies. */
export default defineListener<{ ms: number }>({
  description: 'Replies after a while; for timeouts and kills of a call.',
  payload: {
    tag: 'slow',
    schema: {
      type: 'object',
      properties: { ms: { type: 'integer', minimum: 0, maximum: 60_000 } },
      required: ['ms'],
    },
  },
  async handler(payload, ctx) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, payload.ms);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (!ctx.signal.aborted) return ctx.respond(`<slept><ms>${payload.ms}</ms></slept>`);
    return undefined;
  },
});
