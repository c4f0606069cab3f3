import { defineListener } from '../../../src/index.ts';

/**
 * A slow peer for the agent-resume test: answers `<consult><question/></consult>` with
 * `<verdict><text/></verdict>` after ORACLE_MS (default 0), so a daemon can be killed while an
 * agent waits for it.
 */
export default defineListener<{ question: string }>({
  description: 'Answers a question, slowly when told to.',
  payload: {
    tag: 'consult',
    schema: {
      type: 'object',
      properties: { question: { type: 'string', description: 'What to answer.' } },
      required: ['question'],
      additionalProperties: false,
    },
  },
  response: {
    tag: 'verdict',
    schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  async handler(payload, ctx) {
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.ORACLE_MS ?? 0)));
    return ctx.respond({ text: `yes to ${payload.question}` });
  },
});
