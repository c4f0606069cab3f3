/**
 * Consuming an MCP server over Streamable HTTP: the SDK's own server (McpServer on its
 * StreamableHTTPServerTransport) on 127.0.0.1, behind a bearer token.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolRuntime } from '../../src/tools/runtime.ts';
import { call, startRuntime, tempOrganism, until } from './helpers.ts';

const TOKEN = 'http-mcp-token-0123456789';

interface Fixture {
  server: Server;
  url: string;
  seen: Array<{ authorization?: string; team?: string }>;
  close(): Promise<void>;
}

async function httpServer(port = 0): Promise<Fixture> {
  const seen: Fixture['seen'] = [];
  const server = createServer(async (req, res) => {
    seen.push({
      authorization: req.headers.authorization,
      team: req.headers['x-team'] as string | undefined,
    });
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401).end('unauthorized');
      return;
    }
    const mcp = new McpServer({ name: 'calc', version: '1.0.0' });
    mcp.registerTool(
      'add',
      { description: 'Adds two numbers and returns the sum.', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => ({
        content: [{ type: 'text', text: String(a + b) }],
        structuredContent: { sum: a + b },
      }),
    );
    mcp.registerTool(
      'reset',
      { description: 'Resets everything, a tool nobody should get.', inputSchema: {} },
      async () => ({ content: [{ type: 'text', text: 'reset' }] }),
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${bound}/mcp`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let runtime: ToolRuntime | undefined;
let fixture: Fixture | undefined;
afterEach(async () => {
  await runtime?.close();
  await fixture?.close();
  runtime = undefined;
  fixture = undefined;
});

const organism = (url: string) =>
  tempOrganism(`mcp_servers:
  - name: calc
    url: ${url}
    token_env: CALC_TOKEN
    headers: { X-Team: organism }
    exclude: [reset]
    capabilities: { add: read }
    restart_initial_ms: 100
listeners:
  - name: worker
    agent: true
    description: works
    tools: [calc.add]
`);

describe('MCP servers over Streamable HTTP', () => {
  it('calls with the bearer token from token_env and the configured headers; excluded tools are not offered', async () => {
    fixture = await httpServer();
    runtime = await startRuntime(await organism(fixture.url), { CALC_TOKEN: TOKEN });
    expect(await call(runtime, 'worker', 'calc.add', { a: 2, b: 3 })).toMatchObject({
      status: 'ok',
      value: { sum: 5 },
    });
    expect(runtime.registry.has('calc.reset')).toBe(false);
    expect(fixture.seen.every((s) => s.authorization === `Bearer ${TOKEN}` && s.team === 'organism')).toBe(
      true,
    );
    expect(await call(runtime, 'worker', 'calc.add', { a: 'two', b: 3 })).toMatchObject({
      status: 'refused',
      error: { code: 'InvalidArguments' },
    });
  });

  it('without the token the server is down, and says which variable is missing (never a value)', async () => {
    fixture = await httpServer();
    runtime = await startRuntime(await organism(fixture.url), {});
    const result = await call(runtime, 'worker', 'calc.add', { a: 1, b: 1 });
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    expect(JSON.stringify(result)).toContain('CALC_TOKEN');
  });

  it('a server that stops answering is down, then reconnected when it is back', async () => {
    fixture = await httpServer();
    const port = Number(new URL(fixture.url).port);
    runtime = await startRuntime(await organism(fixture.url), { CALC_TOKEN: TOKEN });
    await fixture.close();
    const failed = await call(runtime, 'worker', 'calc.add', { a: 1, b: 1 });
    expect(failed.status).toBe('error');
    const connection = runtime.mcp!.pool.get('calc')!;
    expect(connection.state === 'down' || connection.state === 'starting').toBe(true);
    fixture = await httpServer(port);
    await until(() => connection.state === 'ready', 'the reconnection');
    expect(await call(runtime, 'worker', 'calc.add', { a: 4, b: 4 })).toMatchObject({
      status: 'ok',
      value: { sum: 8 },
    });
  });
});
