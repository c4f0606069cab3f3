/**
 * Attacks on the organism served over MCP (POST /mcp, issue 18), against the real daemon with the
 * SDK's client: a secret the daemon knows never leaves in a tool's result (as the thread history
 * and `organism tools call` redact it), a viewer cannot call a tool by any spelling of the request,
 * and a token in the query string is no token.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../src/daemon.ts';
import { OPERATOR_TOKEN, tempOrganism, VIEWER_TOKEN } from '../mcp/helpers.ts';

/** A secret the daemon knows (the admin's token, named by token_env), never shown to any MCP client. */
const KNOWN_SECRET = 'sk-attack-Zq8Wm3Lr6Tx1Vb9N';
let daemon: Daemon;

beforeAll(async () => {
  const organism = await tempOrganism(`auth:
  tokens:
    - { name: ops, role: operator, token_env: MCP_OPS_TOKEN }
    - { name: watcher, role: viewer, token_env: MCP_VIEW_TOKEN }
    - { name: root, role: admin, token_env: ATTACK_ADMIN_TOKEN }
mcp:
  tools: [key_value_set, key_value_get]
listeners:
  - name: noop
    handler: ${JSON.stringify(new URL('../mcp/fixtures/upper.ts', import.meta.url).pathname)}
    mcp: true
`);
  daemon = await startDaemon({
    configPath: organism.config,
    port: 0,
    host: '127.0.0.1',
    reloadOnSighup: false,
    env: {
      ...process.env,
      MCP_OPS_TOKEN: OPERATOR_TOKEN,
      MCP_VIEW_TOKEN: VIEWER_TOKEN,
      ATTACK_ADMIN_TOKEN: KNOWN_SECRET,
    },
  });
});
afterAll(async () => {
  await daemon?.close(100);
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'attack', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

function rpc(body: unknown, token?: string, query = '') {
  return fetch(`${daemon.url}/mcp${query}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

describe('MCP serving attacks', () => {
  it('a tool result holding a secret the daemon knows reaches the client redacted', async () => {
    const client = await connect(OPERATOR_TOKEN);
    const set = await client.callTool({
      name: 'key_value_set',
      arguments: { key: 'note', value: `the key is ${KNOWN_SECRET}` },
    });
    expect(set.isError, JSON.stringify(set)).toBeFalsy();
    const got = await client.callTool({ name: 'key_value_get', arguments: { key: 'note' } });
    const text = JSON.stringify(got);
    expect(text).toContain('the key is');
    expect(text).not.toContain(KNOWN_SECRET);
    expect(text).not.toContain('Zq8Wm3Lr6Tx1Vb9N');
    await client.close();
  });

  it('a viewer cannot call a tool: not in a batch, not with odd spacing, not over the stdio relay spelling', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'key_value_get', arguments: { key: 'note' } },
    };
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    for (const body of [call, [init, call], [[call]], { ...call, method: 'tools/call ' }]) {
      const response = await rpc(body, VIEWER_TOKEN);
      const text = await response.text();
      expect(text, JSON.stringify(body)).not.toContain('the key is');
    }
  });

  it('a token in the query string is not a token', async () => {
    const response = await rpc(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      undefined,
      `?token=${OPERATOR_TOKEN}`,
    );
    expect(response.status).toBe(401);
    const other = await rpc(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      undefined,
      `?access_token=${OPERATOR_TOKEN}`,
    );
    expect(other.status).toBe(401);
  });

  it("a client's arguments for a listener are data: markup stays text, bad names and sizes are refused, the daemon goes on", async () => {
    const client = await connect(OPERATOR_TOKEN);
    const markup = await client.callTool({
      name: 'noop',
      arguments: { text: '</text></upper><evil a="1"/>&amp;' },
    });
    const reply = JSON.stringify(markup);
    expect(reply).toContain('<uppered><text>&lt;/TEXT&gt;&lt;/UPPER&gt;&lt;EVIL A=');
    expect(reply).not.toMatch(/<evil|<EVIL/);
    for (const args of [{ 'x><y': 'z' }, { text: 'a'.repeat(5000) }, {}]) {
      const result = await client.callTool({ name: 'noop', arguments: args as Record<string, unknown> }).then(
        (r) => r,
        (e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }),
      );
      expect(result.isError, JSON.stringify(args).slice(0, 40)).toBe(true);
    }
    const after = await client.callTool({ name: 'noop', arguments: { text: 'still here' } });
    expect(JSON.stringify(after)).toContain('STILL HERE');
    await client.close();
  });
});
