/**
 * What the organism answers a server that asks for input mid-call (elicitation/create), per
 * mcp_servers[].elicitation: `defaults` accepts with the schema's defaults when every required
 * field has one and declines otherwise; `decline` does not offer the capability at all. The server
 * is the SDK's McpServer on Streamable HTTP on 127.0.0.1; its tool reports what it got back.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolRuntime } from '../../src/tools/runtime.ts';
import { call, startRuntime, tempOrganism } from './helpers.ts';

let runtime: ToolRuntime | undefined;
let http: Server | undefined;
afterEach(async () => {
  await runtime?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  runtime = undefined;
  http = undefined;
});

/** A server whose `ask` tool asks its client for input, with or without a default for the required field. */
async function askingServer(): Promise<string> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  http = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'] as string | undefined;
    let transport = id ? transports.get(id) : undefined;
    if (!transport) {
      const mcp = new McpServer({ name: 'asker', version: '1.0.0' });
      mcp.registerTool('ask', { description: 'Asks the client.', inputSchema: {} }, async () => {
        if (!mcp.server.getClientCapabilities()?.elicitation)
          return { content: [{ type: 'text', text: 'no elicitation offered' }] };
        const answers = [];
        for (const withDefault of [true, false]) {
          const got = await mcp.server.elicitInput({
            message: 'Which team?',
            requestedSchema: {
              type: 'object',
              properties: {
                team: { type: 'string', ...(withDefault ? { default: 'core' } : {}) },
                note: { type: 'string', default: 'none' },
              },
              required: ['team'],
            },
          });
          answers.push(got);
        }
        return { content: [{ type: 'text', text: JSON.stringify(answers) }] };
      });
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => Math.random().toString(36).slice(2),
        onsessioninitialized: (sid) => {
          transports.set(sid, created);
        },
      });
      transport = created;
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

const organism = (url: string, policy: string) =>
  tempOrganism(`mcp_servers:
  - name: asker
    url: ${url}
    capabilities: { ask: read }
${policy}listeners:
  - name: worker
    agent: true
    description: works
    tools: [asker.ask]
`);

describe('elicitation requests from a server the organism uses', () => {
  it('defaults (the default): accepts with the schema defaults when every required field has one, else declines', async () => {
    runtime = await startRuntime(await organism(await askingServer(), ''));
    const result = await call(runtime, 'worker', 'asker.ask');
    expect(result).toMatchObject({ status: 'ok' });
    // The tool's text is the server's JSON of the two answers, escaped inside the result: unescaped here.
    const flat = JSON.stringify(result).replaceAll('\\', '');
    expect(flat).toContain(
      '[{"action":"accept","content":{"team":"core","note":"none"}},{"action":"decline"}]',
    );
  });

  it('decline: the capability is not offered', async () => {
    runtime = await startRuntime(await organism(await askingServer(), '    elicitation: decline\n'));
    expect(JSON.stringify(await call(runtime, 'worker', 'asker.ask'))).toContain('no elicitation offered');
  });
});
