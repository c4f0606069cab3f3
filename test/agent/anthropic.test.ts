/** Anthropic Messages API against a local server in its wire format. */
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from './helpers.ts';
import { ANSWERED, directProvider, providerContract, REQUEST, type Wire } from './providers.contract.ts';

const last = (list: any[], role: string) => list.filter((m) => m.role === role).at(-1);

const anthropicWire: Wire = {
  name: 'anthropic',
  path: '/v1/messages',
  ids: true,
  backend: (url, keyEnv) => ({
    provider: 'anthropic',
    api_key_env: keyEnv,
    model: 'test-model',
    base_url: url,
  }),
  checkHeaders: (request, key) => {
    expect(request.headers['x-api-key']).toBe(key);
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.headers.authorization).toBeUndefined();
  },
  textReply: (text, usage) => ({
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'test-model',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  }),
  callsReply: (calls) => ({
    id: 'msg_02',
    type: 'message',
    role: 'assistant',
    model: 'test-model',
    content: [
      { type: 'text', text: 'Let me calculate.' },
      ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args })),
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 10, output_tokens: 5 },
  }),
  model: (body) => body.model,
  sampling: (body) => ({ temperature: body.temperature, top_p: body.top_p, max_tokens: body.max_tokens }),
  maxTokensAlways: true,
  system: (body) => body.system,
  tools: (body) =>
    body.tools.map((t: any) => ({ name: t.name, description: t.description, parameters: t.input_schema })),
  sentCalls: (body) =>
    last(body.messages, 'assistant')
      .content.filter((b: any) => b.type === 'tool_use')
      .map((b: any) => ({ id: b.id, name: b.name, args: b.input })),
  sentResults: (body) =>
    last(body.messages, 'user')
      .content.filter((b: any) => b.type === 'tool_result')
      .map((b: any) => ({ id: b.tool_use_id, content: b.content })),
};

providerContract(anthropicWire);

describe('anthropic specifics', () => {
  let server: FakeLlm | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers every tool_use of a turn in one user turn, marking failures is_error', async () => {
    server = await startFakeLlm(() => ({ json: anthropicWire.textReply('done', { input: 1, output: 1 }) }));
    await directProvider(anthropicWire, server.url).complete(ANSWERED, new AbortController().signal);
    const body = server.requests[0]!.body;
    expect(body.max_tokens).toBe(256);
    expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[1].content[0]).toEqual({ type: 'text', text: 'Working.' });
    expect(body.messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'call_a', content: 'RESULT A' },
      { type: 'tool_result', tool_use_id: 'call_b', content: 'RESULT B', is_error: true },
    ]);
  });

  it('reads the stop reason and keeps the text that came with tool calls', async () => {
    server = await startFakeLlm(() => ({
      json: anthropicWire.callsReply([{ id: 'toolu_9', name: 'calculate', args: { expression: '1' } }]),
    }));
    const turn = await directProvider(anthropicWire, server.url).complete(
      REQUEST,
      new AbortController().signal,
    );
    expect(turn).toMatchObject({ text: 'Let me calculate.', stopReason: 'tool_use' });
    expect(turn.toolCalls).toEqual([{ id: 'toolu_9', name: 'calculate', args: { expression: '1' } }]);
  });
});
