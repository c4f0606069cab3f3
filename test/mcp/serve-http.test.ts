/**
 * The organism served over MCP: the SDK's Client against POST /mcp of the real daemon, with the
 * API's bearer tokens (viewer lists, operator calls).
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAuditLines } from '../../src/audit/read.ts';
import type { Daemon } from '../../src/daemon.ts';
import { OPERATOR_TOKEN, servingDaemon, VIEWER_TOKEN } from './helpers.ts';

const OPERATOR = OPERATOR_TOKEN;
const VIEWER = VIEWER_TOKEN;
let daemon: Daemon;
let dataDir: string;

beforeAll(async () => {
  // `hidden` is not offered: it has no mcp: true.
  const started = await servingDaemon(`  - name: hidden
    handler: $UPPER
    payload: hidden
`);
  daemon = started.daemon;
  dataDir = started.organism.dataDir;
});
afterAll(async () => {
  await daemon?.close(100);
});

async function connect(token?: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

describe('POST /mcp', () => {
  it('401 without a token', async () => {
    await expect(connect()).rejects.toMatchObject({ code: 401 });
    const response = await fetch(`${daemon.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
  });

  it('lists the listeners marked mcp: true and the mcp identity tools, with annotations', async () => {
    const client = await connect(VIEWER);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['calculate', 'upper']);
    const calculate = tools.find((t) => t.name === 'calculate')!;
    expect(calculate.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(calculate.inputSchema).toMatchObject({ type: 'object', properties: { expression: {} } });
    const upper = tools.find((t) => t.name === 'upper')!;
    expect(upper.inputSchema).toMatchObject({ properties: { text: { type: 'string' } }, required: ['text'] });
    await client.close();
  });

  it("403 for a viewer's call", async () => {
    const client = await connect(VIEWER);
    await expect(
      client.callTool({ name: 'calculate', arguments: { expression: '1 + 1' } }),
    ).rejects.toMatchObject({
      code: 403,
      message: expect.stringContaining('operator role'),
    });
    await client.close();
  });

  it('calls a listener end to end and returns its reply with the thread id; the thread is a resource', async () => {
    const client = await connect(OPERATOR);
    const result = await client.callTool({ name: 'upper', arguments: { text: 'shout it' } });
    expect(result.isError).toBe(false);
    const structured = result.structuredContent as { thread: string; status: string; reply: string };
    expect(structured.status).toBe('replied');
    expect(structured.reply).toContain('<text>SHOUT IT</text>');
    expect(daemon.bus.thread(structured.thread)?.messages.some((m) => m.from === 'mcp')).toBe(true);
    const read = await client.readResource({ uri: `organism://threads/${structured.thread}` });
    expect((read.contents[0] as { text: string }).text).toContain('SHOUT IT');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(`organism://threads/${structured.thread}`);
    await client.close();
  });

  it("arguments the listener's schema refuses come back as a tool error, and the daemon goes on", async () => {
    const client = await connect(OPERATOR);
    const bad = await client.callTool({ name: 'upper', arguments: { text: 'x'.repeat(2000) } }).then(
      (r) => ({ isError: r.isError, text: JSON.stringify(r.content) }),
      (e: Error) => ({ isError: true, text: e.message }),
    );
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/text|1000|long/i);
    const good = await client.callTool({ name: 'upper', arguments: { text: 'still here' } });
    expect((good.structuredContent as { reply: string }).reply).toContain('STILL HERE');
    await client.close();
  });

  it("calls a native tool under the mcp identity's grants, through the dispatcher (audited as mcp)", async () => {
    const client = await connect(OPERATOR);
    const result = await client.callTool({ name: 'calculate', arguments: { expression: '6 * 7' } });
    expect(result.isError).toBe(false);
    expect(JSON.stringify(result.structuredContent)).toContain('42');
    // Not granted to the identity: not offered, and refused if named anyway.
    const refused = await client.callTool({ name: 'run_command', arguments: { command: 'id' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('no tool named run_command');
    await client.close();
    await daemon.tools.audit.flush();
    const records = (await readAuditLines(join(dataDir, 'audit.jsonl'))).map((l) => JSON.parse(l));
    const calls = records.filter((r) => r.type === 'call' && r.listener === 'mcp');
    // run_command is not the identity's: refused before anything runs (not offered, so not dispatched).
    expect(calls.map((r) => [r.tool, r.outcome])).toEqual([['calculate', 'ok']]);
  });

  it('arguments that do not match the advertised inputSchema are a tool error naming the argument; nothing is injected', async () => {
    const client = await connect(OPERATOR);
    const threads = () => daemon.bus.listThreads({ limit: 10_000 }).threads.length;
    const before = threads();
    // An object for the string `text`: was flattened to its text ('shout') and sent to the listener.
    const object = await client.callTool({ name: 'upper', arguments: { text: { nested: 'shout' } } });
    expect(object.isError).toBe(true);
    expect(JSON.stringify(object.content)).toContain(
      'invalid arguments for upper: field \\"text\\": must be string (got an object)',
    );
    expect(object.structuredContent).toMatchObject({ error: 'invalid_arguments', path: 'text' });
    const list = await client.callTool({ name: 'upper', arguments: { text: ['a', 'b'] } });
    expect(JSON.stringify(list.content)).toContain('must be string (got an array)');
    const number = await client.callTool({ name: 'upper', arguments: { text: 42 } });
    expect(JSON.stringify(number.content)).toContain('must be string (got an integer)');
    const extra = await client.callTool({ name: 'upper', arguments: { text: 'x', shout: true } });
    expect(extra.isError).toBe(true);
    expect(JSON.stringify(extra.content)).toContain('unknown field \\"shout\\"');
    expect(threads()).toBe(before);
    // A native tool under the mcp identity: the dispatcher's own ajv check (after the audit test above,
    // which counts the identity's calls).
    const tool = await client.callTool({ name: 'calculate', arguments: { expression: { op: '6 * 7' } } });
    expect(tool.isError).toBe(true);
    expect(JSON.stringify(tool.content)).toMatch(/invalid arguments for calculate: .*expression/);
    await client.close();
  });
});
