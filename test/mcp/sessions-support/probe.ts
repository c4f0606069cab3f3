import { defineTool } from '../../../src/index.ts';

/**
 * Tells the MCP client that started the call what it does (log, progress), or asks its model
 * (sampling): what ToolRunContext.client gives an own tool. Without a client it says so.
 */
export default defineTool({
  name: 'client_probe',
  description: 'Reports to the calling MCP client, or asks its model.',
  args: {
    type: 'object',
    properties: {
      mode: { type: 'string', enum: ['notify', 'sample'] },
      delay_ms: { type: 'integer', minimum: 0, maximum: 5000 },
      say: { type: 'string', maxLength: 200 },
    },
    required: ['mode'],
    additionalProperties: false,
  },
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run(args: { mode: 'notify' | 'sample'; delay_ms?: number; say?: string }, ctx) {
    const client = ctx.client;
    if (!client) return { client: false };
    if (args.mode === 'sample') {
      const answer = await client.createMessage(
        { messages: [{ role: 'user', content: { type: 'text', text: 'say hello' } }], maxTokens: 20 },
        ctx.signal,
      );
      const content = answer.content as { type: string; text?: string };
      return { client: true, name: client.client.name, said: content.text ?? '' };
    }
    if (args.say !== undefined) {
      client.log('info', { said: args.say }, 'probe');
      client.progress(1, 100, args.say);
      return { client: true, name: client.client.name };
    }
    client.log('info', 'probe started', 'probe');
    client.log('debug', 'probe detail', 'probe');
    client.progress(0, 100, 'starting');
    await new Promise((resolve) => setTimeout(resolve, args.delay_ms ?? 0));
    client.log('info', 'probe working', 'probe');
    client.progress(50, 100, 'halfway');
    client.log('warning', 'probe ending', 'probe');
    client.progress(100, 100, 'done');
    return { client: true, name: client.client.name };
  },
});
