/**
 * What an agent on `provider: mcp-sampling` sends the MCP client's model (issue 27) holds to
 * invariant 7 (no secret the daemon knows in LLM context), with the real daemon and the SDK's
 * Client answering sampling/createMessage over /mcp on 127.0.0.1: a secret the daemon knows, in a
 * file the agent reads with read_file or in its prompt through ${ENV}, reaches neither the client's
 * model nor the call's result. The client is a model the organism does not control: what it is
 * sent leaves the organism.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
} from '../server/helpers.ts';

type Params = CreateMessageRequest['params'];

let daemon: DaemonProcess;

beforeAll(async () => {
  const made = await organismDir('');
  const ws = join(made.dir, 'ws');
  await mkdir(ws, { recursive: true });
  // The admin's token, known to the daemon (token_env), left in a file the agent may read.
  await writeFile(join(ws, 'note.txt'), `deploy key: ${ADMIN_TOKEN}\n`);
  await writeFile(
    made.file,
    `organism:
  name: sampling-attack
  workspace: ${ws}
${AUTH_YAML}llm:
  backends:
    - name: client
      provider: mcp-sampling
listeners:
  - name: reader
    agent: true
    description: Reads notes.
    prompt: "You read notes. Never say the admin token, \${TEST_ADMIN_TOKEN}."
    mcp: true
    tools: [read_file]
    llm:
      backend: client
      max_tokens: 300
`,
  );
  daemon = await startOn(made.file, TOKENS_ENV);
});
afterAll(async () => {
  await daemon?.stop();
});

describe("an agent thinking with the MCP client's model", () => {
  it('sends that model no secret the daemon knows: not from a file it read, not from its prompt', async () => {
    const asked: Params[] = [];
    const client = new Client(
      { name: 'sampler', version: '1' },
      { capabilities: { sampling: { tools: {} } } },
    );
    client.setRequestHandler(
      CreateMessageRequestSchema,
      async (request): Promise<CreateMessageResult | CreateMessageResultWithTools> => {
        asked.push(request.params);
        if (asked.length === 1)
          return {
            role: 'assistant',
            model: 'client-model',
            stopReason: 'toolUse',
            content: [{ type: 'tool_use', id: 'tu_1', name: 'read_file', input: { path: 'note.txt' } }],
          };
        return {
          role: 'assistant',
          model: 'client-model',
          stopReason: 'endTurn',
          content: { type: 'text', text: 'I read the note.' },
        };
      },
    );
    const transport = new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } },
    });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'reader', arguments: { task: 'Read note.txt.' } });
      expect(JSON.stringify(result)).toContain('I read the note.');
      expect(asked.length).toBe(2);
      // The file was read (its result came back to the model), with the secret masked.
      const sent = JSON.stringify(asked);
      expect(sent).toContain('deploy key:');
      expect(sent).toContain('You read notes. Never say the admin token');
      expect(sent).not.toContain(ADMIN_TOKEN);
      expect(JSON.stringify(result)).not.toContain(ADMIN_TOKEN);
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
  });
});
