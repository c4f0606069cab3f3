/**
 * The default organism's greeter called over POST /mcp with the SDK's client: the call returns as
 * soon as the thread it started (greeter -> shouter -> printer) has nothing left in flight, with
 * what the thread produced. The call's own timeout is the bound (2 s), so a call that waits
 * for its timeout shows as `status: timeout`, not as a slow timer.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, defaultOrganismCopy, startDaemonProcess } from '../helpers/daemon.ts';

let daemon: DaemonProcess;

beforeAll(async () => {
  const file = defaultOrganismCopy();
  const text = readFileSync(file, 'utf8')
    .replace('    peers: [shouter]\n', '    peers: [shouter]\n    mcp: true\n')
    .concat('\nmcp:\n  call_timeout_ms: 2000\n');
  expect(text).toContain('mcp: true');
  writeFileSync(file, text);
  daemon = await startDaemonProcess(['--config', file]);
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
});

describe("the default organism's greeter over /mcp", () => {
  it('returns when the thread goes idle (within the 2 s call timeout), with the thread it ran', async () => {
    const client = new Client({ name: 'greeter-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
        requestInit: { headers: daemon.headers() },
      }),
    );
    try {
      const result = await client.callTool({ name: 'greeter', arguments: { name: 'Ada' } });
      const structured = result.structuredContent as { thread: string; status: string };
      expect(structured.status).toBe('idle');
      expect(result.isError).toBe(false);
      const text = (result.content as Array<{ type: string; text?: string }>)
        .map((c) => c.text ?? '')
        .join('\n');
      expect(text).toContain(`(thread ${structured.thread})`);
      // What the thread produced: the greeting the greeter sent on, and the shout the printer printed.
      expect(text).toContain('Hello, Ada!');
      expect(text).toContain('HELLO, ADA!');
      const produced = (result.structuredContent as { produced: { messages: unknown[] } }).produced;
      expect(produced.messages).toEqual([
        expect.objectContaining({
          from: 'greeter',
          to: 'shouter',
          payload: expect.stringContaining('Hello, Ada!'),
        }),
        expect.objectContaining({
          from: 'shouter',
          to: 'printer',
          payload: expect.stringContaining('HELLO, ADA!'),
        }),
      ]);
    } finally {
      await client.close();
    }
  }, 20_000);
});
