/** The agent loop over a real provider wire (OpenAI's, from a local server) and the real bus. */
import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/agent/client.ts';
import { settled } from '../helpers/bus.ts';
import {
  type AgentBus,
  answerOf,
  type FakeLlm,
  recordingOptions,
  startAgentBus,
  startFakeLlm,
} from './helpers.ts';

const KEY = 'sk-proj-agentloop-0123456789';
let running: AgentBus | undefined;
let server: FakeLlm | undefined;
afterEach(async () => {
  await running?.stop();
  await server?.close();
  running = undefined;
  server = undefined;
});

const client = (url: string) =>
  LlmClient.fromConfig(
    {
      strategy: 'failover',
      retries: 1,
      backends: [
        { provider: 'openai', api_key_env: 'LOOP_TEST_KEY', base_url: `${url}/v1`, model: 'gpt-test' },
      ],
    },
    { env: { LOOP_TEST_KEY: KEY }, options: recordingOptions() },
  );

const toolCall = (id: string, name: string, args: string) => ({
  choices: [
    {
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 50, completion_tokens: 10 },
});
const text = (content: string) => ({
  choices: [{ message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 70, completion_tokens: 5 },
});

describe('the agent loop over the OpenAI wire', () => {
  it('answers arguments that do not parse with a readable error, and the model recovers', async () => {
    server = await startFakeLlm((_, i) => ({
      json: [
        toolCall('call_1', 'calculate', '{"expression": "2 +'),
        toolCall('call_2', 'calculate', '{"expression": "2 + 2"}'),
        text('Four.'),
      ][i],
    }));
    running = startAgentBus({ agents: [{ name: 'helper', tools: ['calculate'], llm: client(server.url) }] });
    const { thread } = await running.bus.inject({
      to: 'helper',
      payload: '<helper><task>2 + 2?</task></helper>',
    });
    const messages = await settled(running.bus, thread);
    // The broken call never reached the bus; the good one did.
    expect(messages.filter((m) => m.kind === 'tool-call').map((m) => m.payload)).toEqual([
      '<tool-call><tool>calculate</tool><args>{"expression":"2 + 2"}</args></tool-call>',
    ]);
    expect(answerOf(messages, 'helper')).toBe(
      '<answer><text>Four.</text><status>done</status><turns>3</turns><backend>openai/gpt-test</backend></answer>',
    );
    const second = server.requests[1]!.body.messages;
    expect(second.at(-1).role).toBe('tool');
    expect(second.at(-1).tool_call_id).toBe('call_1');
    expect(second.at(-1).content).toContain('error: InvalidArguments');
    expect(second.at(-1).content).toContain('the arguments are not valid JSON');
    const third = server.requests[2]!.body.messages;
    expect(third.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_2' });
    expect(third.at(-1).content).toContain('{"result":4,"expression":"2 + 2"}');
    expect(running.usage.stats().agents.helper).toEqual({
      input_tokens: 170,
      output_tokens: 25,
      total_tokens: 195,
      calls: 3,
    });
  });

  it('ends with status error when no model answers, and the key reaches neither thread nor model', async () => {
    server = await startFakeLlm(() => ({
      status: 401,
      json: { error: { message: `Incorrect API key provided: ${KEY}` } },
    }));
    running = startAgentBus({ agents: [{ name: 'helper', llm: client(server.url) }] });
    const { thread } = await running.bus.inject({
      to: 'helper',
      payload: '<helper><task>hi</task></helper>',
    });
    const messages = await settled(running.bus, thread);
    const answer = answerOf(messages, 'helper');
    expect(answer).toContain('<status>error</status>');
    expect(answer).toContain('helper could not get an answer from a model: no LLM backend answered');
    expect(answer).toContain('HTTP 401');
    expect(JSON.stringify(messages)).not.toContain(KEY);
    expect(JSON.stringify(server.requests.map((r) => r.body))).not.toContain(KEY);
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});
