/**
 * Issue 14, item 6: a provider that echoes its API key back in another form (a prefix, base64,
 * other case, without `sk-`), in a 400/401 error body or in a successful reply, gets none of those
 * forms into the agent's answer, the thread history or the log. Real local HTTP servers answer in
 * OpenAI's and Anthropic's documented wire formats; the agent runs on a real bus with the real
 * dispatcher. And a tool call's arguments are in the thread history exactly as the audit has them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/agent/client.ts';
import type { AuditEntry, CallRecord } from '../../src/audit/record.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { ToolDefinition } from '../../src/tools/types.ts';
import { keyVariants, leaks } from '../helpers/secrets.ts';
import {
  type AgentBus,
  answerOf,
  ask,
  type FakeLlm,
  type FakeReply,
  recordingOptions,
  startAgentBus,
  startFakeLlm,
} from './helpers.ts';

const OPENAI_KEY = 'sk-proj-Tq3Wm8Zr1Xc6Vb4Nk9Lp2Hj7Gf5Ds0Ay-Ei3Ou';
const ANTHROPIC_KEY = 'sk-ant-api03-Pk7Rn2Wq9Zt4Xm6Vc1Bl8Hf3Gj5Ds0Ya-Ue4Io';

interface Wire {
  name: string;
  key: string;
  backend(url: string): Parameters<typeof LlmClient.fromConfig>[0]['backends'][number];
  error(status: 400 | 401, echoed: string): unknown;
  text(text: string): unknown;
}

/** Error bodies as each API documents them, with the key echoed where a careless server would. */
const WIRES: Wire[] = [
  {
    name: 'openai',
    key: OPENAI_KEY,
    backend: (url) => ({ provider: 'openai', api_key_env: 'KEY', base_url: `${url}/v1`, model: 'gpt-test' }),
    error: (status, echoed) => ({
      error: {
        message:
          status === 401
            ? `Incorrect API key provided: ${echoed}. You can find your API key at https://platform.openai.com/account/api-keys.`
            : `Invalid request for key ${echoed}: 'messages' is too long.`,
        type: 'invalid_request_error',
        param: null,
        code: status === 401 ? 'invalid_api_key' : null,
      },
    }),
    text: (content) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 40, total_tokens: 60 },
    }),
  },
  {
    name: 'anthropic',
    key: ANTHROPIC_KEY,
    backend: (url) => ({ provider: 'anthropic', api_key_env: 'KEY', base_url: url, model: 'claude-test' }),
    error: (status, echoed) => ({
      type: 'error',
      error:
        status === 401
          ? { type: 'authentication_error', message: `invalid x-api-key ${echoed}` }
          : { type: 'invalid_request_error', message: `max_tokens too large for key ${echoed}` },
    }),
    text: (text) => ({
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 20, output_tokens: 40 },
    }),
  },
];

let running: AgentBus | undefined;
let server: FakeLlm | undefined;
afterEach(async () => {
  await running?.stop();
  await server?.close();
  running = undefined;
  server = undefined;
});

/** A logger as the daemon makes it, writing into `lines`. */
function capturedLogger(lines: string[]) {
  return createLogger({
    level: 'debug',
    organism: 'redaction-test',
    destination: { write: (line: string) => lines.push(line) },
  });
}

async function agentOver(
  wire: Wire,
  reply: () => FakeReply,
  log: string[],
  extra: Pick<Parameters<typeof startAgentBus>[0], 'tools' | 'audit'> = {},
) {
  server = await startFakeLlm(() => reply());
  const logger = capturedLogger(log);
  const llm = LlmClient.fromConfig(
    { strategy: 'failover', retries: 0, backends: [wire.backend(server.url)] },
    { env: { KEY: wire.key }, options: recordingOptions(), logger },
  );
  const tools = (extra.tools ?? []).map((t) => t.name);
  running = startAgentBus({ agents: [{ name: 'helper', llm, tools }], logger, ...extra });
  return running;
}

describe.each(WIRES)('a $name backend that echoes its key', (wire) => {
  for (const status of [401, 400] as const) {
    it(`in a ${status} body, in any form, reaches neither the answer, the thread nor the log`, async () => {
      let echoed = '';
      const log: string[] = [];
      const bus = await agentOver(wire, () => ({ status, json: wire.error(status, echoed) }), log);
      for (const [name, variant] of Object.entries(keyVariants(wire.key))) {
        echoed = variant;
        const { messages } = await ask(bus, 'helper', 'Say hello.');
        const answer = answerOf(messages, 'helper');
        // The error itself still reaches the caller, only the key is gone.
        expect(answer, name).toContain(`HTTP ${status}`);
        expect(answer, name).toContain('<status>error</status>');
        expect(leaks(answer, wire.key), `${name}: ${answer}`).toEqual([]);
        const thread = messages.map((m) => m.payload).join('\n');
        expect(leaks(thread, wire.key), `${name}: thread`).toEqual([]);
      }
      expect(server!.requests.length).toBe(Object.keys(keyVariants(wire.key)).length);
      const lines = log.join('');
      expect(lines).toContain(`request refused (HTTP ${status})`);
      expect(leaks(lines, wire.key), 'log').toEqual([]);
    });
  }

  it('in a successful reply (a model repeating the key), in any form, reaches none of them', async () => {
    const variants = Object.entries(keyVariants(wire.key));
    const text = `Sure. ${variants.map(([name, v]) => `${name}: ${v}`).join('; ')}. Anything else?`;
    const log: string[] = [];
    const bus = await agentOver(wire, () => ({ json: wire.text(text) }), log);
    const { messages } = await ask(bus, 'helper', 'What is your key?');
    const answer = answerOf(messages, 'helper');
    expect(answer).toContain('<text>Sure. exact: [REDACTED];');
    expect(answer).toContain('Anything else?</text><status>done</status>');
    expect(leaks(answer, wire.key)).toEqual([]);
    expect(leaks(messages.map((m) => m.payload).join('\n'), wire.key)).toEqual([]);
    expect(leaks(log.join(''), wire.key)).toEqual([]);
  });
});

describe("the model's context", () => {
  it('gets no form of a known key, even from a task or a tool result that carries one', async () => {
    const wire = WIRES[0]!;
    const variants = Object.values(keyVariants(wire.key));
    const echo: ToolDefinition = {
      name: 'lookup',
      description: 'Echoes a stored note.',
      args: { type: 'object', properties: {}, additionalProperties: false },
      readOnly: true,
      capability: 'read',
      source: 'native',
      run: async () => ({ note: `stored: ${variants.join(' ')}` }),
    };
    const replies = [
      {
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      },
      wire.text('Noted.'),
    ];
    let i = 0;
    const bus = await agentOver(wire, () => ({ json: replies[i++] }), [], { tools: [echo] });
    const { messages } = await ask(bus, 'helper', `Remember ${variants[0]} and ${variants[6]}.`);
    expect(answerOf(messages, 'helper')).toContain('Noted.');
    expect(server!.requests).toHaveLength(2);
    const sent = JSON.stringify(server!.requests.map((r) => r.body));
    expect(sent).toContain('Remember [REDACTED] and [REDACTED].');
    expect(sent).toContain('stored: [REDACTED]');
    expect(leaks(sent, wire.key)).toEqual([]);
    // The tool's result as the thread records it, too (the task is the caller's own words).
    const result = messages.find((m) => m.kind === 'tool-result')!.payload;
    expect(result).toContain('stored: [REDACTED]');
    expect(leaks(result, wire.key)).toEqual([]);
  });
});

describe("a tool call's arguments", () => {
  it('are in the thread history exactly as the audit records them, and the tool gets them as given', async () => {
    const args = {
      q: 'weather in Lyon',
      api_key: 'zz-Unregistered-Key-778899',
      source: 'https://admin:Hunter2-pass@db.example.com/x',
    };
    const seen: unknown[] = [];
    const lookup: ToolDefinition = {
      name: 'lookup',
      description: 'Looks something up.',
      args: {
        type: 'object',
        properties: { q: { type: 'string' }, api_key: { type: 'string' }, source: { type: 'string' } },
        additionalProperties: false,
      },
      readOnly: true,
      capability: 'read',
      source: 'native',
      async run(given) {
        seen.push(given);
        return { found: 'sunny' };
      },
    };
    const audit: AuditEntry[] = [];
    const replies = [
      {
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'lookup', arguments: JSON.stringify(args) },
                },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      },
      WIRES[0]!.text('It is sunny.'),
    ];
    let i = 0;
    const bus = await agentOver(WIRES[0]!, () => ({ json: replies[i++] }), [], {
      tools: [lookup],
      audit: { append: (entry) => audit.push(entry), flush: async () => {}, close: async () => {} },
    });
    const { messages, flow } = await ask(bus, 'helper', 'Weather?');
    expect(flow).toEqual([
      'api->helper message',
      'helper->lookup tool-call',
      'lookup->helper tool-result',
      'helper->api response',
    ]);
    expect(seen).toEqual([args]);
    const call = audit.find((r): r is CallRecord => r.type === 'call' && r.tool === 'lookup')!;
    expect(call.input).toEqual({
      q: 'weather in Lyon',
      api_key: '[REDACTED]',
      source: 'https://[REDACTED]@db.example.com/x',
    });
    const payload = messages[1]!.payload;
    const inHistory = JSON.parse(
      /<args>(.*)<\/args>/s
        .exec(payload)![1]!
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&'),
    );
    expect(inHistory).toEqual(call.input);
    expect(payload).not.toContain('Hunter2-pass');
    expect(payload).not.toContain('Unregistered-Key');
  });
});
