/**
 * `organism mcp` (stdio) as a desktop client starts it: the SDK's Client spawns the real CLI,
 * which relays to the daemon's /mcp under the token in $ORGANISM_TOKEN.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.ts';
import { ORGANISM_BIN } from '../helpers/daemon.ts';
import { OPERATOR_TOKEN, servingDaemon, VIEWER_TOKEN } from './helpers.ts';

const OPERATOR = OPERATOR_TOKEN;
const VIEWER = VIEWER_TOKEN;
let daemon: Daemon;

beforeAll(async () => {
  ({ daemon } = await servingDaemon());
});
afterAll(async () => {
  await daemon?.close(100);
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'desktop', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [ORGANISM_BIN, 'mcp', '--url', daemon.url],
      env: { PATH: process.env.PATH ?? '', ORGANISM_TOKEN: token },
      stderr: 'pipe',
    }),
  );
  return client;
}

describe('organism mcp (stdio)', () => {
  it('lists and calls the organism through the daemon', async () => {
    const client = await connect(OPERATOR);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['calculate', 'upper']);
    const reply = await client.callTool({ name: 'upper', arguments: { text: 'from the desktop' } });
    expect((reply.structuredContent as { reply: string }).reply).toContain('FROM THE DESKTOP');
    const sum = await client.callTool({ name: 'calculate', arguments: { expression: '2 + 40' } });
    expect(JSON.stringify(sum.structuredContent)).toContain('42');
    await client.close();
  });

  it("relays the daemon's 403 for a viewer's call as an error", async () => {
    const client = await connect(VIEWER);
    expect((await client.listTools()).tools.length).toBe(2);
    await expect(client.callTool({ name: 'calculate', arguments: { expression: '1' } })).rejects.toThrow(
      /operator role/,
    );
    await client.close();
  });
});
