/** OpenAI Chat Completions (and OpenAI-compatible servers) against a local server in its wire format. */
import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/agent/client.ts';
import { type FakeLlm, startFakeLlm } from './helpers.ts';
import { ANSWERED, directProvider, providerContract, REQUEST, type Wire } from './providers.contract.ts';

const last = (list: any[], role: string) => list.filter((m) => m.role === role).at(-1);

function openAiWire(provider: 'openai' | 'openai-compatible'): Wire {
  return {
    name: provider,
    path: '/v1/chat/completions',
    ids: true,
    // The base includes /v1, as in OpenAI's own clients.
    backend: (url, keyEnv) => ({ provider, api_key_env: keyEnv, model: 'test-model', base_url: `${url}/v1` }),
    checkHeaders: (request, key) => {
      expect(request.headers.authorization).toBe(`Bearer ${key}`);
      expect(request.headers['x-api-key']).toBeUndefined();
    },
    textReply: (text, usage) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
      },
    }),
    callsReply: (calls) => ({
      id: 'chatcmpl-2',
      object: 'chat.completion',
      model: 'test-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: JSON.stringify(c.args) },
            })),
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }),
    model: (body) => body.model,
    // OpenAI's own API is sent max_completion_tokens (its reasoning models refuse max_tokens).
    sampling: (body) => {
      expect(body).not.toHaveProperty(provider === 'openai' ? 'max_tokens' : 'max_completion_tokens');
      return {
        temperature: body.temperature,
        top_p: body.top_p,
        max_tokens: provider === 'openai' ? body.max_completion_tokens : body.max_tokens,
      };
    },
    maxTokensAlways: false,
    system: (body) => {
      expect(body.messages[0].role).toBe('system');
      return body.messages[0].content;
    },
    tools: (body) =>
      body.tools.map((t: any) => {
        expect(t.type).toBe('function');
        return {
          name: t.function.name,
          description: t.function.description,
          parameters: t.function.parameters,
        };
      }),
    sentCalls: (body) =>
      last(body.messages, 'assistant').tool_calls.map((c: any) => {
        expect(typeof c.function.arguments).toBe('string');
        return { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) };
      }),
    sentResults: (body) =>
      body.messages
        .filter((m: any) => m.role === 'tool')
        .map((m: any) => ({ id: m.tool_call_id, content: m.content })),
  };
}

const openai = openAiWire('openai');
providerContract(openai);
providerContract(openAiWire('openai-compatible'));

describe('openai specifics', () => {
  let server: FakeLlm | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('turns arguments that do not parse into a readable error and sends them back verbatim', async () => {
    const broken = '{"expression": "1 +';
    server = await startFakeLlm(() => ({
      json: {
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_x', type: 'function', function: { name: 'calculate', arguments: broken } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
    }));
    const provider = directProvider(openai, server.url);
    const turn = await provider.complete(REQUEST, new AbortController().signal);
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({
      id: 'call_x',
      name: 'calculate',
      args: undefined,
      rawArgs: broken,
    });
    expect(turn.toolCalls[0]!.argsError).toMatch(
      /^the arguments are not valid JSON \(.+\); send one JSON object$/,
    );
    expect(turn.usage).toEqual({ input: 0, output: 0 });

    await provider.complete(
      {
        ...REQUEST,
        messages: [
          REQUEST.messages[0]!,
          { role: 'assistant', text: '', toolCalls: turn.toolCalls },
          {
            role: 'tool',
            results: [{ callId: 'call_x', name: 'calculate', content: 'invalid', isError: true }],
          },
        ],
      },
      new AbortController().signal,
    );
    const sent = server.requests[1]!.body.messages;
    expect(sent[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'calculate', arguments: broken } }],
    });
    expect(sent[3]).toEqual({ role: 'tool', tool_call_id: 'call_x', content: 'invalid' });
  });

  it('sends each result as its own role tool message with its tool_call_id', async () => {
    server = await startFakeLlm(() => ({ json: openai.textReply('ok', { input: 1, output: 1 }) }));
    await directProvider(openai, server.url).complete(ANSWERED, new AbortController().signal);
    const roles = server.requests[0]!.body.messages.map((m: any) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(server.requests[0]!.body.messages[2].content).toBe('Working.');
  });

  it('talks to an OpenAI-compatible server that needs no key', async () => {
    server = await startFakeLlm(() => ({ json: openai.textReply('local model', { input: 3, output: 2 }) }));
    const llm = LlmClient.fromConfig(
      {
        strategy: 'failover',
        retries: 0,
        backends: [{ provider: 'openai-compatible', base_url: `${server.url}/v1`, model: 'qwen2.5' }],
      },
      { env: {} },
    );
    const { turn, backend } = await llm.complete(REQUEST, new AbortController().signal);
    expect(turn.text).toBe('local model');
    expect(backend).toBe('openai-compatible/qwen2.5');
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    expect(server.requests[0]!.body.model).toBe('qwen2.5');
  });
});
