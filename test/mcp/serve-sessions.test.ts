/**
 * /mcp with sessions, against the real daemon (`organism run`) and the SDK's Client over Streamable
 * HTTP: notifications of a call's thread before its result, logging/setLevel, progress tokens,
 * resources/subscribe, resuming a dropped stream with Last-Event-ID, two streams at once, the
 * ClientChannel reaching an own tool (called over MCP, or in a thread an MCP call started), SSE
 * polling (mcp.stream_close_ms), the session cap and idle expiry, and a session used with another
 * credential than the one that opened it.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, ORGANISM_BIN } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  VIEWER_TOKEN,
} from '../server/helpers.ts';
import { messageOf, openRaw, type RawSession, sseReader } from './sse.ts';

const SUPPORT = fileURLToPath(new URL('./sessions-support/', import.meta.url));
const UPPER = fileURLToPath(new URL('./fixtures/upper.ts', import.meta.url));

function yaml(mcpExtra = ''): string {
  return `organism:
  name: mcp-sessions
${AUTH_YAML}tool_modules: [${SUPPORT}probe.ts]
mcp:
  tools: [client_probe]
${mcpExtra}llm:
  backends:
    - { provider: scripted, script: ./script.yaml }
listeners:
  - name: helper
    agent: true
    mcp: true
    description: Runs client_probe and says what it returned.
    tools: [client_probe]
  - name: upper
    handler: ${UPPER}
    mcp: true
  - name: relay
    handler: ${SUPPORT}relay.ts
    mcp: true
    tools: [client_probe]
`;
}

/** The helper agent's model: call client_probe, then say what it returned. */
const SCRIPT = `name: probe-agent
scripts:
  - turns:
      - tool_calls:
          - name: client_probe
            args: { mode: notify }
      - text: "probe said {{result.client}}"
`;

async function organismWith(mcpExtra = ''): Promise<string> {
  const { dir, file } = await organismDir(yaml(mcpExtra));
  await writeFile(join(dir, 'script.yaml'), SCRIPT);
  return file;
}

interface Seen {
  kind: 'log' | 'progress' | 'result' | 'updated';
  detail: unknown;
}

async function connect(
  url: string,
  token: string,
  options: { sampling?: string } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; seen: Seen[] }> {
  const seen: Seen[] = [];
  const client = new Client(
    { name: 'session-test', version: '1' },
    { capabilities: options.sampling !== undefined ? { sampling: {} } : {} },
  );
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    seen.push({ kind: 'log', detail: n.params });
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    seen.push({ kind: 'updated', detail: n.params.uri });
  });
  if (options.sampling !== undefined) {
    const said = options.sampling;
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: said },
      model: 'test-model',
    }));
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport, seen };
}

async function end(c: { client: Client; transport: StreamableHTTPClientTransport }): Promise<void> {
  await c.transport.terminateSession().catch(() => {});
  await c.client.close();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('MCP sessions on the real daemon', () => {
  let daemon: DaemonProcess;
  let mcp: string;

  beforeAll(async () => {
    daemon = await startOn(await organismWith(), TOKENS_ENV);
    mcp = `${daemon.url}/mcp`;
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it("a listener call's thread reaches the client as log and progress notifications, before its result", async () => {
    const c = await connect(daemon.url, OPERATOR_TOKEN);
    expect(c.transport.sessionId).toMatch(/^[\x21-\x7e]+$/);
    await c.client.setLoggingLevel('debug');
    const progress: number[] = [];
    const result = await c.client.callTool({ name: 'upper', arguments: { text: 'loud' } }, undefined, {
      onprogress: (p) => {
        progress.push(p.progress);
        c.seen.push({ kind: 'progress', detail: p });
      },
    });
    c.seen.push({ kind: 'result', detail: result.structuredContent });
    expect((result.structuredContent as { reply: string }).reply).toContain('LOUD');
    const logs = c.seen.filter((s) => s.kind === 'log').map((s) => s.detail as { level: string; data: any });
    // The injected message and the reply, each with who sent it to whom.
    expect(logs.map((l) => [l.data.from, l.data.to, l.data.kind, l.level])).toEqual([
      ['mcp', 'upper', 'message', 'info'],
      ['upper', 'mcp', 'response', 'info'],
    ]);
    expect(logs[1]!.data.payload).toContain('LOUD');
    expect(progress).toEqual([1, 2]);
    // Everything the thread told arrived before the result did.
    expect(c.seen.at(-1)!.kind).toBe('result');
    await end(c);
  });

  it('no secret the daemon knows reaches the client in a notification: a thread message or a tool log carrying a token', async () => {
    const c = await connect(daemon.url, OPERATOR_TOKEN);
    const progress: string[] = [];
    await c.client.callTool({ name: 'upper', arguments: { text: `key ${ADMIN_TOKEN}` } });
    await c.client.callTool(
      { name: 'client_probe', arguments: { mode: 'notify', say: `the key is ${ADMIN_TOKEN}` } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? '') },
    );
    const told = JSON.stringify(c.seen) + progress.join('\n');
    expect(told).toContain('the key is');
    expect(told).toContain('[REDACTED');
    expect(told.toLowerCase()).not.toContain(ADMIN_TOKEN.toLowerCase());
    await end(c);
  });

  it("an agent's call: progress for each hop and model turn, never going back; a tool in its thread gets the client", async () => {
    const c = await connect(daemon.url, OPERATOR_TOKEN);
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await c.client.callTool({ name: 'helper', arguments: { task: 'probe it' } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect((result.structuredContent as { reply: string }).reply).toContain('probe said true');
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    const steps = progress.map((p) => p.message);
    expect(steps).toContain('helper: model turn 1');
    expect(steps).toContain('helper: model turn 2');
    expect(steps).toContain('helper -> client_probe (tool-call)');
    // The tool's own progress (0, 50, 100 of 100) came as log notifications, not on the call's token.
    const told = c.seen
      .filter((s) => s.kind === 'log')
      .map((s) => s.detail as { logger?: string; data: any });
    expect(told.filter((l) => l.logger === 'progress').map((l) => l.data.progress)).toEqual([0, 50, 100]);
    expect(told.filter((l) => l.logger === 'probe').map((l) => l.data)).toEqual([
      'probe started',
      'probe working',
      'probe ending',
    ]);
    await end(c);
  });

  it('logging/setLevel filters per session: at warning, info and debug notifications are not sent', async () => {
    const quiet = await connect(daemon.url, OPERATOR_TOKEN);
    const loud = await connect(daemon.url, OPERATOR_TOKEN);
    await quiet.client.setLoggingLevel('warning');
    await loud.client.setLoggingLevel('debug');
    await quiet.client.callTool({ name: 'client_probe', arguments: { mode: 'notify' } });
    await loud.client.callTool({ name: 'client_probe', arguments: { mode: 'notify' } });
    const levels = (seen: Seen[]) =>
      seen.filter((s) => s.kind === 'log').map((s) => (s.detail as { level: string }).level);
    expect(levels(quiet.seen)).toEqual(['warning']);
    expect(levels(loud.seen)).toEqual(['info', 'debug', 'info', 'warning']);
    // Not set: info and up.
    const plain = await connect(daemon.url, OPERATOR_TOKEN);
    await plain.client.callTool({ name: 'client_probe', arguments: { mode: 'notify' } });
    expect(levels(plain.seen)).toEqual(['info', 'info', 'warning']);
    await Promise.all([end(quiet), end(loud), end(plain)]);
  });

  it("an own tool called over MCP gets the client (ctx.client): its progress carries the call's token", async () => {
    const c = await connect(daemon.url, OPERATOR_TOKEN);
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await c.client.callTool(
      { name: 'client_probe', arguments: { mode: 'notify', delay_ms: 50 } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    expect(result.structuredContent).toEqual({ result: { client: true, name: 'session-test' } });
    expect(progress).toEqual([
      { progress: 0, total: 100, message: 'starting' },
      { progress: 50, total: 100, message: 'halfway' },
      { progress: 100, total: 100, message: 'done' },
    ]);
    // Without a progressToken, no progress is sent (and the call is the same).
    const again = await c.client.callTool({ name: 'client_probe', arguments: { mode: 'notify' } });
    expect(again.isError).toBe(false);
    await end(c);
  });

  it("a tool called in a thread an MCP call started reaches that call's client: sampling answered by its model", async () => {
    const c = await connect(daemon.url, OPERATOR_TOKEN, { sampling: 'hello from the client model' });
    const result = await c.client.callTool({ name: 'relay', arguments: { mode: 'sample' } });
    const reply = (result.structuredContent as { reply: string }).reply;
    expect(reply).toContain('hello from the client model');
    // A client that offers no sampling is told so by a named error, as a tool failure in the thread.
    const bare = await connect(daemon.url, OPERATOR_TOKEN);
    const refused = await bare.client.callTool({ name: 'relay', arguments: { mode: 'sample' } });
    expect((refused.structuredContent as { reply: string }).reply).toContain('does not offer sampling');
    await Promise.all([end(c), end(bare)]);
  });

  it('resources/subscribe: a subscribed thread says updated on each message; unsubscribe stops it', async () => {
    const caller = await connect(daemon.url, OPERATOR_TOKEN);
    const first = await caller.client.callTool({ name: 'upper', arguments: { text: 'one' } });
    const thread = (first.structuredContent as { thread: string }).thread;
    const uri = `organism://threads/${thread}`;
    const watcher = await connect(daemon.url, VIEWER_TOKEN);
    await watcher.client.subscribeResource({ uri });
    const inject = () =>
      fetch(`${daemon.url}/api/v1/inject`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ thread, to: 'upper', payload: '<upper><text>two</text></upper>' }),
      });
    expect((await inject()).status).toBe(202);
    const deadline = Date.now() + 5_000;
    while (watcher.seen.filter((s) => s.kind === 'updated').length < 2 && Date.now() < deadline)
      await sleep(20);
    const updates = watcher.seen.filter((s) => s.kind === 'updated');
    // The injected message and upper's reply to it.
    expect(updates.map((u) => u.detail)).toEqual([uri, uri]);
    await watcher.client.unsubscribeResource({ uri });
    expect((await inject()).status).toBe(202);
    await sleep(500);
    expect(watcher.seen.filter((s) => s.kind === 'updated')).toHaveLength(2);
    // A thread that does not exist cannot be watched.
    await expect(watcher.client.subscribeResource({ uri: 'organism://threads/no-such' })).rejects.toThrow(
      /no resource organism:\/\/threads\/no-such: no such thread/,
    );
    await Promise.all([end(caller), end(watcher)]);
  });

  it('a dropped stream resumes with Last-Event-ID: what was sent meanwhile, then the result', async () => {
    const s = await openRaw(mcp, OPERATOR_TOKEN);
    await fetch(mcp, {
      method: 'POST',
      headers: s.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } }),
    }).then((r) => r.text());
    const post = await fetch(mcp, {
      method: 'POST',
      headers: s.headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'client_probe', arguments: { mode: 'notify', delay_ms: 400 } },
      }),
    });
    expect(post.headers.get('content-type')).toContain('text/event-stream');
    const stream = sseReader(post);
    const priming = await stream.next();
    expect(priming).toMatchObject({ data: '', retry: 1000 });
    const firstLog = await stream.next();
    expect(messageOf(firstLog!)).toMatchObject({
      method: 'notifications/message',
      params: { data: 'probe started' },
    });
    // The client loses the stream here, with one event read after the priming one.
    await stream.cancel();
    await sleep(700);
    const resumed = await fetch(mcp, {
      method: 'GET',
      headers: s.headers({ accept: 'text/event-stream', 'last-event-id': firstLog!.id! }),
    });
    expect(resumed.status).toBe(200);
    const replay = sseReader(resumed);
    const got: Array<Record<string, unknown>> = [];
    for (let e = await replay.next(); e; e = await replay.next()) {
      const m = messageOf(e);
      if (m) got.push(m);
      if (m && 'result' in m) break;
    }
    expect(got.map((m) => (m.params as { data?: string } | undefined)?.data ?? (m.id as number))).toEqual([
      'probe detail',
      'probe working',
      'probe ending',
      2,
    ]);
    expect(got.at(-1)!.result).toMatchObject({ structuredContent: { result: { client: true } } });
    await replay.cancel();
    // An event id this session never gave is refused, not answered with a stream that has a gap.
    const unknown = await fetch(mcp, {
      method: 'GET',
      headers: s.headers({ accept: 'text/event-stream', 'last-event-id': 'nonsense.99999' }),
    });
    expect(unknown.status).toBe(400);
    await fetch(mcp, { method: 'DELETE', headers: s.headers() });
  });

  it('two calls at once on one session: two streams, each with its own result', async () => {
    const s = await openRaw(mcp, OPERATOR_TOKEN);
    const call = (id: number) =>
      fetch(mcp, {
        method: 'POST',
        headers: s.headers(),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'client_probe', arguments: { mode: 'notify', delay_ms: 300 } },
        }),
      });
    const started = Date.now();
    const responses = await Promise.all([call(11), call(12)]);
    const results = await Promise.all(
      responses.map(async (r) => {
        expect(r.headers.get('content-type')).toContain('text/event-stream');
        const reader = sseReader(r);
        for (let e = await reader.next(); e; e = await reader.next()) {
          const m = messageOf(e);
          if (m && 'result' in m) return m.id;
        }
        return undefined;
      }),
    );
    expect(results).toEqual([11, 12]);
    // Side by side, not one after the other.
    expect(Date.now() - started).toBeLessThan(1_500);
    await fetch(mcp, { method: 'DELETE', headers: s.headers() });
  });

  it("another credential on someone's session is refused as not found; the owner's session goes on", async () => {
    const owner = await connect(daemon.url, OPERATOR_TOKEN);
    const id = owner.transport.sessionId!;
    const asOther = (token: string | undefined, method: string, extra: Record<string, string> = {}) =>
      fetch(mcp, {
        method,
        headers: {
          'content-type': 'application/json',
          accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
          'mcp-session-id': id,
          'mcp-protocol-version': '2025-11-25',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...extra,
        },
        ...(method === 'POST'
          ? { body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) }
          : {}),
      });
    // An admin token is still not the session's credential; nor is a viewer's; none is a 401.
    for (const token of [ADMIN_TOKEN, VIEWER_TOKEN]) {
      const post = await asOther(token, 'POST');
      expect(post.status).toBe(404);
      const body = await post.json();
      expect(body.error.data.code).toBe('mcp.session_not_found');
      expect(body.error.message).toContain('initialize a new session');
      expect((await asOther(token, 'GET', { 'last-event-id': `${id}.1` })).status).toBe(404);
      expect((await asOther(token, 'DELETE')).status).toBe(404);
    }
    expect((await asOther(undefined, 'POST')).status).toBe(401);
    const call = await asOther(ADMIN_TOKEN, 'POST', {});
    expect(call.status).toBe(404);
    // The owner's session was neither read nor ended by any of that.
    const { tools } = await owner.client.listTools();
    expect(tools.map((t) => t.name)).toContain('upper');
    await end(owner);
    // Ended by its owner: gone for the owner too.
    const after = await fetch(mcp, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        'mcp-session-id': id,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
  });

  it('organism mcp (stdio) relays over a session both ways: the daemon asks the desktop client for sampling', async () => {
    const client = new Client({ name: 'desktop', version: '1' }, { capabilities: { sampling: {} } });
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(String((n.params.data as { kind?: string }).kind ?? n.params.data));
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'answered on the desktop' },
      model: 'desktop-model',
    }));
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [ORGANISM_BIN, 'mcp', '--url', daemon.url],
        env: { PATH: process.env.PATH ?? '', ORGANISM_TOKEN: OPERATOR_TOKEN },
        stderr: 'pipe',
      }),
    );
    const result = await client.callTool({ name: 'relay', arguments: { mode: 'sample' } });
    expect((result.structuredContent as { reply: string }).reply).toContain('answered on the desktop');
    // The call's thread reached the desktop client too, before the result.
    expect(logs).toEqual(['message', 'response']);
    await client.close();
  });

  it("a viewer's session lists but cannot call: 403 before anything runs", async () => {
    const viewer = await connect(daemon.url, VIEWER_TOKEN);
    await expect(viewer.client.callTool({ name: 'upper', arguments: { text: 'x' } })).rejects.toMatchObject({
      code: 403,
    });
    expect((await viewer.client.listTools()).tools.length).toBeGreaterThan(0);
    await end(viewer);
  });
});

describe('MCP session limits and SSE polling (mcp.max_sessions, session_idle_ms, stream_close_ms)', () => {
  let daemon: DaemonProcess;
  let mcp: string;

  beforeAll(async () => {
    daemon = await startOn(
      await organismWith(
        '  max_sessions: 2\n  session_idle_ms: 1500\n  stream_close_ms: 150\n  sse_retry_ms: 100\n',
      ),
      TOKENS_ENV,
    );
    mcp = `${daemon.url}/mcp`;
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('a call past stream_close_ms: the stream closes with a retry hint before the result; the result comes on reconnect', async () => {
    const s = await openRaw(mcp, OPERATOR_TOKEN);
    const post = await fetch(mcp, {
      method: 'POST',
      headers: s.headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'client_probe', arguments: { mode: 'notify', delay_ms: 600 } },
      }),
    });
    const stream = sseReader(post);
    const events = [];
    for (let e = await stream.next(); e; e = await stream.next()) events.push(e);
    expect(events[0]).toMatchObject({ data: '', retry: 100 });
    expect(events.some((e) => messageOf(e)?.id === 5)).toBe(false);
    const resumed = await fetch(mcp, {
      method: 'GET',
      headers: s.headers({ accept: 'text/event-stream', 'last-event-id': events.at(-1)!.id! }),
    });
    const replay = sseReader(resumed);
    let result: Record<string, unknown> | undefined;
    for (let e = await replay.next(); e && !result; e = await replay.next()) {
      const m = messageOf(e);
      if (m?.id === 5) result = m;
    }
    expect(result?.result).toMatchObject({ structuredContent: { result: { client: true } } });
    await fetch(mcp, { method: 'DELETE', headers: s.headers() });
  });

  it("the session's protocol version decides the stream, whatever older version a request's header names", async () => {
    // Negotiated 2025-11-25 at initialize; a client that sends a fixed 2025-03-26 header still gets
    // the priming event (and a resumable, closable stream) its session agreed on.
    const s = await openRaw(mcp, OPERATOR_TOKEN);
    const post = await fetch(mcp, {
      method: 'POST',
      headers: s.headers({ 'mcp-protocol-version': '2025-03-26' }),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 6,
        method: 'tools/call',
        params: { name: 'client_probe', arguments: { mode: 'notify', delay_ms: 400 } },
      }),
    });
    const stream = sseReader(post);
    const events = [];
    for (let e = await stream.next(); e; e = await stream.next()) events.push(e);
    expect(events[0]).toMatchObject({ data: '', retry: 100 });
    expect(events.some((e) => messageOf(e)?.id === 6)).toBe(false);
    // A version this server does not know is still refused.
    const unknown = await fetch(mcp, {
      method: 'POST',
      headers: s.headers({ 'mcp-protocol-version': '1999-01-01' }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(400);
    await fetch(mcp, { method: 'DELETE', headers: s.headers() });
  });

  it("the SDK's client follows the closed stream by itself and gets the result", async () => {
    const c = await connect(daemon.url, OPERATOR_TOKEN);
    const result = await c.client.callTool({
      name: 'client_probe',
      arguments: { mode: 'notify', delay_ms: 500 },
    });
    expect(result.structuredContent).toEqual({ result: { client: true, name: 'session-test' } });
    await end(c);
  });

  it('the session cap refuses an initialize past it with a clear 503; ending one makes room', async () => {
    const a = await openRaw(mcp, OPERATOR_TOKEN);
    const b = await openRaw(mcp, OPERATOR_TOKEN);
    const refused = await openRaw(mcp, OPERATOR_TOKEN).catch((e: Error) => e.message);
    expect(refused).toContain('initialize: 503');
    expect(refused).toContain('mcp.session_limit');
    expect(refused).toContain('already holds 2 MCP sessions');
    expect((await fetch(mcp, { method: 'DELETE', headers: a.headers() })).status).toBe(200);
    const c = await openRaw(mcp, OPERATOR_TOKEN);
    await fetch(mcp, { method: 'DELETE', headers: b.headers() });
    await fetch(mcp, { method: 'DELETE', headers: c.headers() });
  });

  it('an open stream keeps its session from being ended as idle; once the client closes it, the session idles out', async () => {
    const s = await openRaw(mcp, OPERATOR_TOKEN);
    const list = () => listTools(mcp, s);
    const reading = new AbortController();
    const stream = await fetch(mcp, {
      method: 'GET',
      headers: s.headers({ accept: 'text/event-stream' }),
      signal: reading.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    // Past session_idle_ms (1500) with nothing but the open stream: the sweeper leaves it be.
    await sleep(2_000);
    expect((await list()).status).toBe(200);
    reading.abort();
    await stream.body?.cancel().catch(() => {});
    await sleep(2_000);
    const gone = await list();
    expect(gone.status).toBe(404);
    expect((await gone.json()).error.message).toContain('idle longer than mcp.session_idle_ms');
  });

  it('a session idle past session_idle_ms is ended: its id is not found, with the reason', async () => {
    const s = await openRaw(mcp, OPERATOR_TOKEN);
    const list = () => listTools(mcp, s);
    expect((await list()).status).toBe(200);
    await sleep(2_000);
    const gone = await list();
    expect(gone.status).toBe(404);
    const body = await gone.json();
    expect(body.error.message).toContain('idle longer than mcp.session_idle_ms (1500 ms)');
    // Expired sessions no longer count against the cap.
    const x = await openRaw(mcp, OPERATOR_TOKEN);
    const y = await openRaw(mcp, OPERATOR_TOKEN);
    await fetch(mcp, { method: 'DELETE', headers: x.headers() });
    await fetch(mcp, { method: 'DELETE', headers: y.headers() });
  });
});

/** tools/list on a raw session: the request a test sends to see whether the session is still there. */
function listTools(mcp: string, s: RawSession): Promise<Response> {
  return fetch(mcp, {
    method: 'POST',
    headers: s.headers(),
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
  });
}
