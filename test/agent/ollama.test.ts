/** Ollama /api/chat against a local server in its wire format. */
import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/agent/client.ts';
import { type FakeLlm, startFakeLlm } from './helpers.ts';
import { ANSWERED, directProvider, providerContract, REQUEST, type Wire } from './providers.contract.ts';

const last = (list: any[], role: string) => list.filter((m) => m.role === role).at(-1);

const ollama: Wire = {
  name: 'ollama',
  path: '/api/chat',
  ids: false,
  // api_key_env: an Ollama behind a proxy that wants a bearer token.
  backend: (url, keyEnv) => ({ provider: 'ollama', base_url: url, model: 'test-model', api_key_env: keyEnv }),
  checkHeaders: (request, key) => {
    expect(request.headers.authorization).toBe(`Bearer ${key}`);
    expect(request.body.stream).toBe(false);
  },
  textReply: (text, usage) => ({
    model: 'test-model',
    created_at: '2025-01-01T00:00:00Z',
    message: { role: 'assistant', content: text },
    done: true,
    done_reason: 'stop',
    prompt_eval_count: usage.input,
    eval_count: usage.output,
  }),
  // No call ids, arguments as an object, and done_reason "stop" even though the model called tools.
  callsReply: (calls) => ({
    model: 'test-model',
    created_at: '2025-01-01T00:00:00Z',
    message: {
      role: 'assistant',
      content: '',
      tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: c.args } })),
    },
    done: true,
    done_reason: 'stop',
    prompt_eval_count: 10,
    eval_count: 5,
  }),
  model: (body) => body.model,
  sampling: (body) => ({
    temperature: body.options.temperature,
    top_p: body.options.top_p,
    max_tokens: body.options.num_predict,
  }),
  maxTokensAlways: true,
  system: (body) => {
    expect(body.messages[0].role).toBe('system');
    return body.messages[0].content;
  },
  tools: (body) =>
    body.tools.map((t: any) => ({
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters,
    })),
  sentCalls: (body) =>
    last(body.messages, 'assistant').tool_calls.map((c: any) => {
      expect(typeof c.function.arguments).toBe('object');
      return { name: c.function.name, args: c.function.arguments };
    }),
  sentResults: (body) =>
    body.messages
      .filter((m: any) => m.role === 'tool')
      .map((m: any) => ({ name: m.tool_name, content: m.content })),
};

providerContract(ollama);

describe('ollama specifics', () => {
  let server: FakeLlm | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('treats tool calls as the turn even when done_reason is "stop", and makes up distinct ids', async () => {
    server = await startFakeLlm(() => ({
      json: ollama.callsReply([
        { name: 'calculate', args: { expression: '1 + 2' } },
        { name: 'calculate', args: { expression: '3 + 4' } },
      ]),
    }));
    const provider = directProvider(ollama, server.url);
    const turn = await provider.complete(REQUEST, new AbortController().signal);
    expect(turn.stopReason).toBe('stop');
    expect(turn.toolCalls.map((c) => c.args)).toEqual([{ expression: '1 + 2' }, { expression: '3 + 4' }]);
    expect(turn.toolCalls[0]!.id).not.toBe(turn.toolCalls[1]!.id);
    expect(turn.usage).toEqual({ input: 10, output: 5 });
  });

  it('sends results in call order as role tool messages named by tool_name', async () => {
    server = await startFakeLlm(() => ({ json: ollama.textReply('ok', { input: 1, output: 1 }) }));
    await directProvider(ollama, server.url).complete(ANSWERED, new AbortController().signal);
    const messages = server.requests[0]!.body.messages;
    expect(messages.slice(3)).toEqual([
      { role: 'tool', content: 'RESULT A', tool_name: 'calculate' },
      { role: 'tool', content: 'RESULT B', tool_name: 'calculate' },
    ]);
    expect(server.requests[0]!.body.options).toEqual({ num_predict: 256 });
  });

  it('is skipped while base_url_env is unset, and used once it is set', async () => {
    server = await startFakeLlm(() => ({ json: ollama.textReply('from ollama', { input: 1, output: 1 }) }));
    const section = {
      strategy: 'failover' as const,
      retries: 0,
      backends: [
        { provider: 'ollama' as const, base_url_env: 'OLLAMA_URL', model: 'llama3.1' },
        { provider: 'scripted' as const },
      ],
    };
    const without = LlmClient.fromConfig(section, { env: {} });
    expect(without.backends).toEqual(['scripted/builtin']);
    expect(without.status()[0]).toEqual({
      label: 'ollama',
      available: false,
      reason: 'OLLAMA_URL is not set',
    });
    const withUrl = LlmClient.fromConfig(section, { env: { OLLAMA_URL: server.url } });
    expect(withUrl.backends).toEqual(['ollama/llama3.1', 'scripted/builtin']);
    const { turn } = await withUrl.complete(REQUEST, new AbortController().signal);
    expect(turn.text).toBe('from ollama');
  });
});
