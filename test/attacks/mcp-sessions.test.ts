/**
 * Attacks on /mcp's sessions (issue 27) with the real daemon (`organism run`, a child process) and
 * real HTTP on 127.0.0.1: one credential cannot take every session and lock the others out, and
 * malformed requests on the session paths (GET streams, DELETE, Last-Event-ID, odd headers and
 * JSON-RPC) get clear 4xx answers while the daemon goes on serving.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';
import { OPERATOR_TOKEN, REPO, tempOrganism, VIEWER_TOKEN } from '../mcp/helpers.ts';

const MAX_SESSIONS = 6;
const PER_TOKEN = 3;
let daemon: DaemonProcess;
let mcp: string;

beforeAll(async () => {
  const organism = await tempOrganism(`auth:
  tokens:
    - { name: ops, role: operator, token_env: MCP_OPS_TOKEN }
    - { name: watcher, role: viewer, token_env: MCP_VIEW_TOKEN }
mcp:
  tools: [calculate]
  max_sessions: ${MAX_SESSIONS}
  max_sessions_per_token: ${PER_TOKEN}
listeners:
  - name: upper
    handler: ${JSON.stringify(`${REPO}test/mcp/fixtures/upper.ts`)}
    mcp: true
`);
  daemon = await startDaemonProcess(['--config', organism.config], {
    MCP_OPS_TOKEN: OPERATOR_TOKEN,
    MCP_VIEW_TOKEN: VIEWER_TOKEN,
  });
  mcp = `${daemon.url}/mcp`;
}, 30_000);
afterAll(async () => {
  await daemon?.stop();
});
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'attack', version: '1' } },
};

function headers(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extra,
  };
}

/** A raw initialize; resolves with the session id (undefined when refused) and the status. */
async function open(token: string): Promise<{ status: number; id: string | undefined; body: string }> {
  const r = await fetch(mcp, { method: 'POST', headers: headers(token), body: JSON.stringify(INIT) });
  const body = await r.text();
  return { status: r.status, id: r.headers.get('mcp-session-id') ?? undefined, body };
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'attack', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcp), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function alive(): Promise<void> {
  expect(daemon.child.exitCode).toBeNull();
  const health = await fetch(`${daemon.url}/healthz`);
  expect(health.status).toBe(200);
}

describe('MCP session attacks', () => {
  it('a viewer holding streams open on every session it can get does not lock an operator out of /mcp', async () => {
    const taken: string[] = [];
    const streams: Response[] = [];
    cleanups.push(async () => {
      for (const r of streams) await r.body?.cancel().catch(() => {});
      for (const id of taken)
        await fetch(mcp, { method: 'DELETE', headers: headers(VIEWER_TOKEN, { 'mcp-session-id': id }) });
    });
    let refused: { status: number; body: string } | undefined;
    for (let i = 0; i < MAX_SESSIONS * 2 && !refused; i++) {
      const s = await open(VIEWER_TOKEN);
      if (s.id === undefined) refused = s;
      else {
        taken.push(s.id);
        // Each session kept busy: its GET stream open, as a client waiting for notifications does.
        const stream = await fetch(mcp, {
          method: 'GET',
          headers: headers(VIEWER_TOKEN, { 'mcp-session-id': s.id, accept: 'text/event-stream' }),
        });
        expect(stream.status).toBe(200);
        streams.push(stream);
      }
    }
    // The viewer is stopped before it holds every session, with a reason that names it.
    expect(taken.length).toBeLessThan(MAX_SESSIONS);
    expect(refused?.status).toBe(503);
    expect(refused?.body).toContain("token 'watcher'");
    expect(refused?.body).toContain('mcp.max_sessions_per_token');
    // The operator still gets a session and calls a listener through it.
    const client = await connect(OPERATOR_TOKEN);
    const result = await client.callTool({ name: 'upper', arguments: { text: 'still served' } });
    expect(JSON.stringify(result.content)).toContain('STILL SERVED');
    await client.close();
  });

  it("a token at its share that opens one more session ends its own least recently used idle one, nobody else's", async () => {
    const operator = await connect(OPERATOR_TOKEN);
    const ids: string[] = [];
    cleanups.push(async () => {
      for (const id of ids)
        await fetch(mcp, { method: 'DELETE', headers: headers(VIEWER_TOKEN, { 'mcp-session-id': id }) });
      await operator.close();
    });
    for (let i = 0; i < PER_TOKEN + 1; i++) {
      const s = await open(VIEWER_TOKEN);
      expect(s.status, s.body).toBe(200);
      ids.push(s.id!);
    }
    const ask = (id: string) =>
      fetch(mcp, {
        method: 'POST',
        headers: headers(VIEWER_TOKEN, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }),
        body: '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
      }).then((r) => r.status);
    // The first (least recently used) went to make room; the newest are served.
    expect(await ask(ids[0]!)).toBe(404);
    expect(await ask(ids.at(-1)!)).toBe(200);
    // The operator's session, older than all of them, was not touched.
    const { tools } = await operator.listTools();
    expect(tools.map((t) => t.name)).toContain('upper');
  });

  it('malformed requests on the session paths get a clear 4xx; the daemon goes on', async () => {
    const s = await open(OPERATOR_TOKEN);
    expect(s.id).toBeDefined();
    const id = s.id!;
    const on = (extra: Record<string, string> = {}) =>
      headers(OPERATOR_TOKEN, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25', ...extra });
    const attempts: Array<[string, RequestInit]> = [
      ['GET, Last-Event-ID of nothing', { method: 'GET', headers: on({ 'last-event-id': 'x' }) }],
      [
        'GET, Last-Event-ID past the end',
        { method: 'GET', headers: on({ 'last-event-id': '_GET_stream.99999' }) },
      ],
      [
        'GET, Last-Event-ID huge',
        { method: 'GET', headers: on({ 'last-event-id': `${'a'.repeat(7000)}.1` }) },
      ],
      ['GET, no text/event-stream', { method: 'GET', headers: on({ accept: 'application/json' }) }],
      ['GET, unknown session', { method: 'GET', headers: on({ 'mcp-session-id': 'ffff' }) }],
      ['GET, huge session id', { method: 'GET', headers: on({ 'mcp-session-id': 'f'.repeat(7000) }) }],
      ['DELETE, unknown session', { method: 'DELETE', headers: on({ 'mcp-session-id': 'nope' }) }],
      ['POST, not JSON', { method: 'POST', headers: on(), body: '{"jsonrpc":' }],
      ['POST, JSON but no message', { method: 'POST', headers: on(), body: '42' }],
      ['POST, an empty batch', { method: 'POST', headers: on(), body: '[]' }],
      ['POST, null', { method: 'POST', headers: on(), body: 'null' }],
      [
        'POST, a method of a number',
        { method: 'POST', headers: on(), body: '{"jsonrpc":"2.0","id":1,"method":7}' },
      ],
      [
        'POST, a result to nothing',
        { method: 'POST', headers: on(), body: '{"jsonrpc":"2.0","id":"zz","result":{}}' },
      ],
      [
        'POST, an error to nothing',
        { method: 'POST', headers: on(), body: '{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}' },
      ],
      [
        'POST, params of a string',
        {
          method: 'POST',
          headers: on(),
          body: '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}',
        },
      ],
      ['POST, a second initialize', { method: 'POST', headers: on(), body: JSON.stringify(INIT) }],
      [
        'POST, unsupported protocol version',
        {
          method: 'POST',
          headers: on({ 'mcp-protocol-version': '1999-01-01' }),
          body: '{"jsonrpc":"2.0","id":3,"method":"tools/list"}',
        },
      ],
      [
        'POST, a deep batch',
        { method: 'POST', headers: on(), body: `${'['.repeat(5000)}${']'.repeat(5000)}` },
      ],
      ['PUT', { method: 'PUT', headers: on(), body: '{}' }],
      ['PATCH', { method: 'PATCH', headers: on(), body: '{}' }],
    ];
    for (const [what, init] of attempts) {
      const r = await fetch(mcp, { ...init, signal: AbortSignal.timeout(5_000) }).catch((e: Error) => e);
      if (r instanceof Error) throw new Error(`${what}: ${r.message}`);
      const stream = r.headers.get('content-type')?.startsWith('text/event-stream');
      if (stream) await r.body?.cancel();
      const body = stream ? '(stream)' : await r.text();
      // A result to nothing and an error to nothing are accepted (202) as the spec says; the rest are refused.
      expect(r.status, `${what}: ${body.slice(0, 200)}`).toBeLessThan(500);
      if (r.status >= 400) expect(body.length, what).toBeGreaterThan(0);
      await alive();
    }
    // The session still works for its owner.
    const list = await fetch(mcp, {
      method: 'POST',
      headers: on(),
      body: '{"jsonrpc":"2.0","id":4,"method":"tools/list"}',
    });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('upper');
    // Ended by a DELETE that carries a body (ignored): gone for its owner too.
    const del = await fetch(mcp, { method: 'DELETE', headers: on(), body: '{"jsonrpc":"2.0"' });
    expect(del.status).toBe(200);
    const gone = await fetch(mcp, {
      method: 'POST',
      headers: on(),
      body: '{"jsonrpc":"2.0","id":5,"method":"tools/list"}',
    });
    expect(gone.status).toBe(404);
    await alive();
    expect(daemon.stderr()).not.toMatch(/Unhandled|uncaught|TypeError/i);
  });
});
