/**
 * Attack on POST /mcp of an organism with no tokens (loopback, the local token only): a web page the
 * operator has open must not drive it (a cross-site POST with a simple content type, an Origin of
 * another site, DNS rebinding through a Host that is not loopback), even one that somehow held the
 * local token: the cross-site refusal stands on its own.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../src/daemon.ts';
import { tempOrganism } from '../mcp/helpers.ts';

let daemon: Daemon;
beforeAll(async () => {
  const upper = new URL('../mcp/fixtures/upper.ts', import.meta.url).pathname;
  const organism = await tempOrganism(
    `mcp:\n  tools: [calculate]\nlisteners:\n  - name: upper\n    handler: ${upper}\n`,
  );
  daemon = await startDaemon({
    configPath: organism.config,
    port: 0,
    host: '127.0.0.1',
    reloadOnSighup: false,
  });
});
afterAll(async () => {
  await daemon?.close(100);
});

const CALL = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'calculate', arguments: { expression: '6*7' } },
};

const auth = () => ({ authorization: `Bearer ${daemon.localToken.token}` });

describe('an organism with no tokens over MCP, from a web page', () => {
  it('answers a command-line client with the local token (the control), and none without', async () => {
    const res = await fetch(`${daemon.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...auth(),
      },
      body: JSON.stringify(CALL),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('42');
    const none = await fetch(`${daemon.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(CALL),
    });
    expect(none.status).toBe(401);
    expect(await none.text()).not.toContain('42');
  });

  it('refuses a cross-site request, whatever its content type, and a rebinding Host', async () => {
    const tries: Array<Record<string, string>> = [
      { origin: 'https://evil.example', 'content-type': 'text/plain' },
      { 'sec-fetch-site': 'cross-site', 'content-type': 'text/plain' },
      { origin: 'null', 'content-type': 'application/json' },
    ];
    for (const headers of tries) {
      const res = await fetch(`${daemon.url}/mcp`, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', ...auth(), ...headers },
        body: JSON.stringify(CALL),
      });
      const text = await res.text();
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(text).not.toContain('42');
    }
  });

  it('refuses a rebinding Host (fetch cannot set Host: a raw request does)', async () => {
    const url = new URL(`${daemon.url}/mcp`);
    const body = JSON.stringify(CALL);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host: `evil.example:${url.port}`,
            ...auth(),
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(answer.status).toBe(403);
    expect(answer.text).not.toContain('42');
  });
});
