/**
 * provider: mcp-sampling against a fake ClientChannel (the end-to-end test, with the SDK's client
 * over /mcp, is test/mcp/sampling-backend.e2e.test.ts): what goes into sampling/createMessage,
 * tools only where the client declared sampling.tools, the named error when the thread has no
 * client, and the fallback to the next backend then.
 */
import { describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/agent/client.ts';
import { createMcpSamplingProvider, NO_TOOLS_NOTE } from '../../src/agent/providers/mcp-sampling.ts';
import { createScriptedProvider } from '../../src/agent/providers/scripted.ts';
import type { CompletionRequest } from '../../src/agent/types.ts';
import { LlmError, OrganismError } from '../../src/errors.ts';
import {
  type ClientChannel,
  type CreateMessageRequestParams,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
  createClientChannels,
} from '../../src/mcp/server/client-channel.ts';
import { ANSWERED, modelContract, REQUEST } from './providers.contract.ts';

type Answer = CreateMessageResult | CreateMessageResultWithTools;

interface FakeChannel extends ClientChannel {
  asked: CreateMessageRequestParams[];
}

function fakeChannel(
  answer: (params: CreateMessageRequestParams, signal?: AbortSignal) => Answer | Promise<Answer>,
  offers: { sampling?: boolean; tools?: boolean } = {},
): FakeChannel {
  const asked: CreateMessageRequestParams[] = [];
  return {
    asked,
    offers: {
      sampling: offers.sampling ?? true,
      samplingTools: offers.tools ?? false,
      elicitation: { form: false, url: false },
    },
    client: { name: 'desk-assistant', version: '1.0' },
    caller: { name: 'ops', role: 'operator' },
    async createMessage(params, signal) {
      asked.push(params);
      return answer(params, signal);
    },
    elicit: () => Promise.reject(new Error('not offered')),
    log: () => {},
    progress: () => {},
  };
}

const THREAD = 'thread-1';
const TASK = (REQUEST.messages[0] as { content: string }).content;
const signal = () => new AbortController().signal;
const on = (request: CompletionRequest): CompletionRequest => ({ ...request, thread: THREAD });
const said = (text: string): Answer => ({
  role: 'assistant',
  content: { type: 'text', text },
  model: 'client-model-x',
  stopReason: 'endTurn',
});

function providerWith(channel: ClientChannel | undefined, model?: string, timeoutMs = 5000) {
  const channels = createClientChannels();
  if (channel) channels.bind(THREAD, channel);
  return createMcpSamplingProvider({ channels, timeoutMs, ...(model ? { model } : {}) });
}

/** Every provider's promises, with a channel that binds whatever thread asks. */
modelContract('mcp-sampling', {
  kind: 'mcp-sampling',
  estimatesUsage: true,
  answering: async (text) => anyThread(fakeChannel(() => said(text), { tools: true })),
  calling: async (calls) =>
    anyThread(
      fakeChannel(
        () => ({
          role: 'assistant',
          model: 'm',
          stopReason: 'toolUse',
          content: calls.map((c, i) => ({
            type: 'tool_use',
            id: c.id ?? `c${i}`,
            name: c.name,
            input: c.args,
          })),
        }),
        { tools: true },
      ),
    ),
});

function anyThread(channel: ClientChannel) {
  return createMcpSamplingProvider({
    channels: { bind: () => () => {}, forThread: () => channel },
    timeoutMs: 5000,
  });
}

describe('mcp-sampling provider', () => {
  it('sends the system prompt, the conversation, max tokens, temperature and the model hint; answers with the client model’s text', async () => {
    const channel = fakeChannel(() => said('Hello from the client model.'));
    const provider = providerWith(channel, 'claude-sonnet');
    const turn = await provider.complete(
      on({ ...REQUEST, functions: [], options: { temperature: 0.3 } }),
      signal(),
    );
    expect(turn.text).toBe('Hello from the client model.');
    expect(turn.toolCalls).toEqual([]);
    expect(provider.label).toBe('mcp-sampling/claude-sonnet');
    const [params] = channel.asked;
    expect(params).toMatchObject({
      systemPrompt: REQUEST.system,
      maxTokens: REQUEST.maxTokens,
      temperature: 0.3,
      includeContext: 'none',
      modelPreferences: { hints: [{ name: 'claude-sonnet' }] },
      messages: [{ role: 'user', content: { type: 'text', text: TASK } }],
    });
    expect(params!.tools).toBeUndefined();
    // No counts come back from a client: the estimate is characters / 4 of what went and came.
    expect(turn.usage.output).toBe(Math.ceil('Hello from the client model.'.length / 4));
    expect(turn.usage.input).toBeGreaterThan(REQUEST.system.length / 4);
  });

  it('offers the agent’s functions as sampling tools when the client declared sampling.tools, and reads tool_use back', async () => {
    const channel = fakeChannel(
      () => ({
        role: 'assistant',
        model: 'm',
        stopReason: 'toolUse',
        content: [
          { type: 'text', text: 'Computing.' },
          { type: 'tool_use', id: 'tu_1', name: 'calculate', input: { expression: '6*7' } },
        ],
      }),
      { tools: true },
    );
    const turn = await providerWith(channel).complete(on(ANSWERED), signal());
    expect(turn.text).toBe('Computing.');
    expect(turn.toolCalls).toEqual([{ id: 'tu_1', name: 'calculate', args: { expression: '6*7' } }]);
    const [params] = channel.asked;
    expect(params!.tools).toEqual([
      {
        name: 'calculate',
        description: 'Evaluates arithmetic.',
        inputSchema: REQUEST.functions[0]!.parameters,
      },
    ]);
    expect(params!.systemPrompt).toBe(REQUEST.system);
    // Earlier calls and their answers as tool_use / tool_result pairs, ids kept.
    expect(params!.messages[1]!.content).toEqual([
      { type: 'text', text: 'Working.' },
      { type: 'tool_use', id: 'call_a', name: 'calculate', input: { expression: '1 + 1' } },
      { type: 'tool_use', id: 'call_b', name: 'calculate', input: { expression: '1 / 0' } },
    ]);
    expect(params!.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', toolUseId: 'call_a', content: [{ type: 'text', text: 'RESULT A' }] },
        {
          type: 'tool_result',
          toolUseId: 'call_b',
          content: [{ type: 'text', text: 'RESULT B' }],
          isError: true,
        },
      ],
    });
  });

  it('without sampling.tools: a plain text turn, earlier calls written as text, the model told it can call nothing', async () => {
    const channel = fakeChannel(() => ({
      role: 'assistant',
      model: 'm',
      // A client that answers tool_use although no tool was offered: not a call the agent makes.
      content: [
        { type: 'text', text: 'The answer is 2.' },
        { type: 'tool_use', id: 'x', name: 'calculate', input: {} },
      ] as never,
    }));
    const turn = await providerWith(channel).complete(on(ANSWERED), signal());
    expect(turn).toMatchObject({ text: 'The answer is 2.', toolCalls: [] });
    const [params] = channel.asked;
    expect(params!.tools).toBeUndefined();
    expect(params!.systemPrompt).toBe(`${REQUEST.system}\n\n${NO_TOOLS_NOTE}`);
    expect(params!.messages.map((m) => m.content)).toEqual([
      { type: 'text', text: TASK },
      {
        type: 'text',
        text: 'Working.\n[called calculate with {"expression":"1 + 1"}]\n[called calculate with {"expression":"1 / 0"}]',
      },
      { type: 'text', text: 'RESULT A\n\nRESULT B' },
    ]);
  });

  it('a thread no MCP client started fails with llm.no_client, saying so', async () => {
    const error = await providerWith(undefined)
      .complete(on(REQUEST), signal())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).code).toBe('llm.no_client');
    expect((error as LlmError).message).toContain(
      `thread ${THREAD} was not started by an MCP client's tools/call on this daemon`,
    );
  });

  it('a client that offers no sampling fails with llm.no_client naming the client', async () => {
    const channel = fakeChannel(() => said('never'), { sampling: false });
    const error = (await providerWith(channel)
      .complete(on(REQUEST), signal())
      .catch((e: unknown) => e)) as LlmError;
    expect(error.code).toBe('llm.no_client');
    expect(error.message).toContain(
      'the MCP client "desk-assistant" that started thread thread-1 does not offer sampling',
    );
    expect(channel.asked).toEqual([]);
  });

  it('a client that refuses is llm.client_refused (not retried); one that does not answer in time is llm.timeout', async () => {
    const refusing = fakeChannel(() => Promise.reject(new Error('User rejected sampling request')));
    const refused = (await providerWith(refusing)
      .complete(on(REQUEST), signal())
      .catch((e: unknown) => e)) as LlmError;
    expect(refused.code).toBe('llm.client_refused');
    expect(refused.retryable).toBe(false);
    expect(refused.message).toContain('User rejected sampling request');

    const silent = fakeChannel(
      (_params, s) =>
        new Promise((_resolve, reject) => s?.addEventListener('abort', () => reject(new Error('aborted')))),
    );
    const late = (await providerWith(silent, undefined, 50)
      .complete(on(REQUEST), signal())
      .catch((e: unknown) => e)) as LlmError;
    expect(late.code).toBe('llm.timeout');
    expect(late.message).toContain('did not answer sampling/createMessage in time');
  });

  it("the channel's own failures keep their meaning: client gone is llm.no_client, its timeout llm.timeout", async () => {
    const failing = (code: string) =>
      fakeChannel(() => Promise.reject(new OrganismError(code, `the MCP client desk-assistant: ${code}`)));
    const gone = (await providerWith(failing('mcp.client_gone'))
      .complete(on(REQUEST), signal())
      .catch((e: unknown) => e)) as LlmError;
    expect(gone.code).toBe('llm.no_client');
    const slow = (await providerWith(failing('mcp.client_timeout'))
      .complete(on(REQUEST), signal())
      .catch((e: unknown) => e)) as LlmError;
    expect(slow.code).toBe('llm.timeout');
  });

  it('with no client, the agent’s next backend answers (failover), and the failure is in the log', async () => {
    const warnings: string[] = [];
    const logger = { info: () => {}, debug: () => {}, warn: (_o: object, m: string) => warnings.push(m) };
    const llm = new LlmClient(
      [
        { provider: providerWith(undefined) },
        {
          provider: createScriptedProvider({
            script: { name: 'fallback', scripts: [{ turns: [{ text: 'from the fallback' }] }] },
          }),
        },
      ],
      { strategy: 'failover', retries: 2 },
      {},
      logger,
    );
    const { turn, backend } = await llm.complete(on(REQUEST), signal());
    expect(turn.text).toBe('from the fallback');
    expect(backend).toBe('scripted/fallback');
    expect(warnings).toEqual(['LLM backend mcp-sampling/client failed']);
  });

  it('alone, with no client: the client says no backend answered, with the reason', async () => {
    const llm = new LlmClient([{ provider: providerWith(undefined) }], { strategy: 'failover', retries: 3 });
    const error = (await llm.complete(on(REQUEST), signal()).catch((e: unknown) => e)) as LlmError;
    expect(error.code).toBe('llm.all_failed');
    expect(error.message).toContain('no MCP client to ask');
  });
});
