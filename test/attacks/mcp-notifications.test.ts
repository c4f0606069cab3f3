/**
 * What one MCP session is told of another's work (issue 27), with the real daemon and two SDK
 * Clients on 127.0.0.1: a viewer subscribed to a thread is told that it changed (the URI), never
 * what was said in it, and hears nothing of an operator's call: no log or progress notification
 * of another session's call reaches it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';
import { OPERATOR_TOKEN, REPO, tempOrganism, VIEWER_TOKEN } from '../mcp/helpers.ts';

let daemon: DaemonProcess;

beforeAll(async () => {
  const organism = await tempOrganism(`auth:
  tokens:
    - { name: ops, role: operator, token_env: MCP_OPS_TOKEN }
    - { name: watcher, role: viewer, token_env: MCP_VIEW_TOKEN }
listeners:
  - name: upper
    handler: ${JSON.stringify(`${REPO}test/mcp/fixtures/upper.ts`)}
    mcp: true
`);
  daemon = await startDaemonProcess(['--config', organism.config], {
    MCP_OPS_TOKEN: OPERATOR_TOKEN,
    MCP_VIEW_TOKEN: VIEWER_TOKEN,
  });
}, 30_000);
afterAll(async () => {
  await daemon?.stop();
});

async function connect(token: string) {
  const client = new Client({ name: 'attack', version: '1' });
  const heard: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    heard.push(n);
  });
  client.setNotificationHandler(ProgressNotificationSchema, (n) => {
    heard.push(n);
  });
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
    heard.push(n);
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, heard, updated, transport };
}

async function until(probe: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("another session's work, as a viewer hears it", () => {
  it('a subscribed viewer is told a thread changed, never what was said; an operator call tells it nothing', async () => {
    const ops = await connect(OPERATOR_TOKEN);
    const viewer = await connect(VIEWER_TOKEN);
    try {
      const first = await ops.client.callTool(
        { name: 'upper', arguments: { text: 'first words' } },
        undefined,
        { onprogress: () => {} },
      );
      const thread = (first.structuredContent as { thread: string }).thread;
      const uri = `organism://threads/${thread}`;
      // The viewer opens its stream (GET) and subscribes to the operator's thread.
      await viewer.client.subscribeResource({ uri });
      // The operator goes on in that thread (the API's inject with its thread) and calls again.
      const said = 'private words of the operator';
      const injected = await fetch(`${daemon.url}/api/v1/inject`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ to: 'upper', thread, payload: `<upper><text>${said}</text></upper>` }),
      });
      expect(injected.status, await injected.clone().text()).toBe(202);
      const second = await ops.client.callTool(
        { name: 'upper', arguments: { text: 'second call words' } },
        undefined,
        { onprogress: () => {} },
      );
      expect(JSON.stringify(second)).toContain('SECOND CALL WORDS');
      await until(() => viewer.updated.length > 0);
      // The operator's own session heard its calls (so there was something to hear).
      expect(JSON.stringify(ops.heard)).toContain('second call words');
      await new Promise((r) => setTimeout(r, 300));
      const heard = JSON.stringify(viewer.heard);
      expect(viewer.updated.every((u) => u === uri)).toBe(true);
      expect(heard).not.toContain('private words');
      expect(heard).not.toContain('PRIVATE WORDS');
      expect(heard).not.toContain('first words');
      expect(heard).not.toContain('second call words');
      expect(
        viewer.heard.every((n) => (n as { method: string }).method === 'notifications/resources/updated'),
      ).toBe(true);
    } finally {
      for (const c of [ops, viewer]) {
        await c.transport.terminateSession().catch(() => {});
        await c.client.close();
      }
    }
  });
});
