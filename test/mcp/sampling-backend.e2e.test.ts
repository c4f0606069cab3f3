/**
 * `provider: mcp-sampling` on the real daemon (`organism run`), called over /mcp by the SDK's
 * Client that declares sampling and answers sampling/createMessage: the agent's reply is what the
 * client's model said, the thread's model-turn record and the token metric name the backend, tools
 * go through sampling's tools where the client declared sampling.tools (and the call through the
 * dispatcher and the audit), and a turn with no client to ask fails with the named error, or falls
 * over to the next backend of the agent's list.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
  ErrorCode,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_TOOLS_NOTE } from '../../src/agent/providers/mcp-sampling.ts';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  metric,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
} from '../server/helpers.ts';

const YAML = `organism:
  name: mcp-sampling-e2e
${AUTH_YAML}llm:
  backends:
    - name: client
      provider: mcp-sampling
      model: claude-test-model
    - name: stand-in
      provider: scripted
      script: ./stand-in.script.yaml
listeners:
  - name: helper
    agent: true
    description: Answers questions.
    prompt: You are the helper of the sampling test.
    mcp: true
    tools: [calculate]
    llm:
      backend: client
      max_tokens: 300
  - name: resilient
    agent: true
    description: Answers with whichever model there is.
    mcp: true
`;

type Params = CreateMessageRequest['params'];
type Answer = (params: Params, n: number) => CreateMessageResult | CreateMessageResultWithTools;

async function connect(url: string, capabilities: Record<string, unknown>, answer?: Answer) {
  const client = new Client({ name: 'sampling-test', version: '3.1' }, { capabilities });
  const asked: Params[] = [];
  if (answer)
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params);
      return answer(request.params, asked.length);
    });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } },
  });
  await client.connect(transport);
  return {
    client,
    asked,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

const text = (t: string): CreateMessageResult => ({
  role: 'assistant',
  content: { type: 'text', text: t },
  model: 'the-client-model',
  stopReason: 'endTurn',
});

/** The agent's `<answer>` fields. */
function answerOf(payload: string) {
  const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(payload)?.[1];
  return { text: field('text'), status: field('status'), backend: field('backend') };
}

async function threadMessages(url: string, thread: string): Promise<any[]> {
  const res = await call(url, `/api/v1/threads/${thread}`, { token: ADMIN_TOKEN });
  return res.status === 200 ? (res.json.messages as any[]) : [];
}

describe('provider mcp-sampling on the real daemon', () => {
  let daemon: DaemonProcess;

  beforeAll(async () => {
    const { dir, file } = await organismDir(YAML);
    await writeFile(
      join(dir, 'stand-in.script.yaml'),
      'name: stand-in\nscripts:\n  - repeat: true\n    turns:\n      - text: the scripted stand-in answered\n',
    );
    daemon = await startOn(file, TOKENS_ENV);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it("answers an agent's turn with the client's model: its words are the reply; the model-turn record and the token metric show the backend", async () => {
    const c = await connect(daemon.url, { sampling: {} }, () => text('Forty-two, says the client model.'));
    try {
      const result = await c.client.callTool({
        name: 'helper',
        arguments: { task: 'What is six times seven?' },
      });
      expect(result.isError).toBe(false);
      const { reply, thread } = result.structuredContent as { reply: string; thread: string };
      expect(answerOf(reply)).toEqual({
        text: 'Forty-two, says the client model.',
        status: 'done',
        backend: 'mcp-sampling/claude-test-model',
      });
      // What went to the client: the agent's system prompt (told it can call nothing: this client
      // has no sampling.tools), the task, max_tokens and the model as a hint; none of the client's
      // other context.
      expect(c.asked).toHaveLength(1);
      const [params] = c.asked;
      expect(params!.systemPrompt).toContain('You are the helper of the sampling test.');
      expect(params!.systemPrompt!.endsWith(NO_TOOLS_NOTE)).toBe(true);
      expect(params).toMatchObject({
        maxTokens: 300,
        includeContext: 'none',
        modelPreferences: { hints: [{ name: 'claude-test-model' }] },
      });
      expect(params!.tools).toBeUndefined();
      expect(JSON.stringify(params!.messages)).toContain('What is six times seven?');

      const turn = (await threadMessages(daemon.url, thread)).find((m) => m.kind === 'model-turn');
      expect(turn.payload).toContain('<backend>mcp-sampling/claude-test-model</backend>');
      const tokens = Number(/<output_tokens>(\d+)<\/output_tokens>/.exec(turn.payload)![1]);
      expect(tokens).toBe(Math.ceil('Forty-two, says the client model.'.length / 4));
      const metrics = await call(daemon.url, '/metrics', { token: ADMIN_TOKEN });
      expect(
        metric(metrics.text, 'organism_llm_tokens_total', { listener: 'helper', direction: 'output' }),
      ).toBeGreaterThanOrEqual(tokens);
    } finally {
      await c.close();
    }
  });

  it('offers the agent its tools through sampling.tools: the client model calls calculate, the dispatcher runs it (audited), the result goes back as tool_result', async () => {
    const c = await connect(daemon.url, { sampling: { tools: {} } }, (params, n) => {
      if (n === 1)
        return {
          role: 'assistant',
          model: 'the-client-model',
          stopReason: 'toolUse',
          content: [{ type: 'tool_use', id: 'tu_1', name: 'calculate', input: { expression: '6 * 7' } }],
        };
      const last = params.messages.at(-1)!;
      const results = (Array.isArray(last.content) ? last.content : [last.content]) as any[];
      const seen = JSON.stringify(results[0]?.content ?? '');
      return text(
        results[0]?.type === 'tool_result' && seen.includes('42') ? 'It is 42.' : `unexpected: ${seen}`,
      );
    });
    try {
      const result = await c.client.callTool({
        name: 'helper',
        arguments: { task: 'Compute six times seven.' },
      });
      const { reply, thread } = result.structuredContent as { reply: string; thread: string };
      expect(answerOf(reply).text).toBe('It is 42.');
      expect(c.asked).toHaveLength(2);
      expect(c.asked[0]!.tools?.map((t) => t.name)).toEqual(['calculate']);
      expect(c.asked[0]!.systemPrompt).not.toContain(NO_TOOLS_NOTE);
      expect(c.asked[1]!.messages.at(-2)!.content).toEqual([
        { type: 'tool_use', id: 'tu_1', name: 'calculate', input: { expression: '6 * 7' } },
      ]);
      const audit = await call(daemon.url, `/api/v1/audit?thread=${thread}&tool=calculate`, {
        token: ADMIN_TOKEN,
      });
      expect(audit.json.records).toEqual([
        expect.objectContaining({ type: 'call', listener: 'helper', tool: 'calculate', outcome: 'ok' }),
      ]);
    } finally {
      await c.close();
    }
  });

  it('a turn with no MCP client to ask fails with the named error: a thread the API started, and a client that offers no sampling', async () => {
    const sent = await call(daemon.url, '/api/v1/inject', {
      token: OPERATOR_TOKEN,
      body: { payload: '<helper><task>Anyone there?</task></helper>' },
    });
    expect(sent.status).toBe(202);
    const thread = sent.json.thread as string;
    const answered = await until(async () => {
      const found = (await threadMessages(daemon.url, thread)).find((m) => m.payload.startsWith('<answer>'));
      return found ?? undefined;
    }, 30_000);
    const { text: said, status } = answerOf(answered.payload);
    expect(status).toBe('error');
    expect(said).toContain(
      `no MCP client to ask: thread ${thread} was not started by an MCP client's tools/call on this daemon`,
    );

    const c = await connect(daemon.url, {});
    try {
      const result = await c.client.callTool({ name: 'helper', arguments: { task: 'Anyone there?' } });
      const reply = answerOf((result.structuredContent as { reply: string }).reply);
      expect(reply.status).toBe('error');
      expect(reply.text).toContain('the MCP client "sampling-test" that started thread');
      expect(reply.text).toContain('does not offer sampling');
    } finally {
      await c.close();
    }
  });

  it('a client whose user declines the request: the agent answers with the error, saying the client did not answer', async () => {
    const c = await connect(daemon.url, { sampling: {} }, () => {
      throw new McpError(ErrorCode.InvalidRequest, 'User rejected sampling request');
    });
    try {
      const result = await c.client.callTool({ name: 'helper', arguments: { task: 'Anyone there?' } });
      const reply = answerOf((result.structuredContent as { reply: string }).reply);
      expect(reply.status).toBe('error');
      expect(reply.text).toContain(
        'mcp-sampling/claude-test-model: the MCP client "sampling-test" did not answer sampling/createMessage',
      );
      expect(reply.text).toContain('User rejected sampling request');
      expect(c.asked).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it("with no client to ask, the agent's next backend answers (failover); with one, the client's model does", async () => {
    const sent = await call(daemon.url, '/api/v1/inject', {
      token: OPERATOR_TOKEN,
      body: { payload: '<resilient><task>Hello?</task></resilient>' },
    });
    const thread = sent.json.thread as string;
    const answered = await until(async () => {
      const found = (await threadMessages(daemon.url, thread)).find((m) => m.payload.startsWith('<answer>'));
      return found ?? undefined;
    }, 30_000);
    expect(answerOf(answered.payload)).toMatchObject({
      text: 'the scripted stand-in answered',
      status: 'done',
      backend: 'scripted/stand-in',
    });

    const c = await connect(daemon.url, { sampling: {} }, () => text('the client model answered'));
    try {
      const result = await c.client.callTool({ name: 'resilient', arguments: { task: 'Hello?' } });
      expect(answerOf((result.structuredContent as { reply: string }).reply)).toMatchObject({
        text: 'the client model answered',
        backend: 'mcp-sampling/claude-test-model',
      });
    } finally {
      await c.close();
    }
  });
});
