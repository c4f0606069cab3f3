/**
 * The daemon as a service, end to end over HTTP and WebSocket: roles, every endpoint, secrets kept
 * out of every answer, kill / pause / resume, metrics that move, the live stream, and the
 * `status`, `threads` and `tail` commands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type DaemonProcess, runCli, startDaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  chainYaml,
  LISTENERS,
  metric,
  NAPPER_YAML,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';

const SECRETS = {
  TEST_SMTP_PASSWORD: 'smtp-pw-Secret-4471-Qx',
  TEST_SEARCH_KEY: 'search-key-Secret-9921-Zr',
  TEST_KV_PASS: 'kvpass-Secret-3310-Lm',
};
const SECRET_VALUES = [...Object.values(SECRETS), ADMIN_TOKEN, OPERATOR_TOKEN, VIEWER_TOKEN];

const YAML = `organism:
  name: service-test
  log_level: info
${AUTH_YAML}kv:
  url: redis://:\${TEST_KV_PASS}@127.0.0.1:6399/0
smtp:
  host: 127.0.0.1
  port: 2599
  secure: false
  user: mailer
  password_env: TEST_SMTP_PASSWORD
  from: organism@example.com
web_search:
  provider: brave
  api_key_env: TEST_SEARCH_KEY
listeners:
${chainYaml()}${NAPPER_YAML}  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [calculate, read_file]
  - name: assistant
    agent: true
    description: Works out arithmetic with the calculate tool.
    prompt: Be brief.
    tools: [calculate]
    peers: [printer]
    max_turns: 6
llm:
  backends:
    - provider: scripted
      script: ${LISTENERS}assistant.script.yaml
`;

let daemon: DaemonProcess;
let base: string;
/** Every body any endpoint answered, to look for secrets in at the end. */
const seen: string[] = [];

async function api(path: string, options: Parameters<typeof call>[2] = {}) {
  const result = await call(base, path, { token: ADMIN_TOKEN, ...options });
  seen.push(result.text, JSON.stringify([...result.headers]));
  return result;
}

async function inject(payload: string, to?: string, token = OPERATOR_TOKEN): Promise<string> {
  const res = await api('/api/v1/inject', { token, body: { to, payload } });
  expect(res.status, res.text).toBe(202);
  return res.json.thread as string;
}

async function settled(thread: string, messages: number) {
  return until(async () => {
    const res = await api(`/api/v1/threads/${thread}`);
    return res.json?.status === 'idle' && res.json.messages.length >= messages ? res.json : undefined;
  });
}

beforeAll(async () => {
  const { file } = await organismDir(YAML);
  daemon = await startOn(file, { ...TOKENS_ENV, ...SECRETS });
  base = daemon.url;
});
afterAll(async () => {
  await daemon?.stop();
});

describe('roles', () => {
  it('answers nothing but /healthz without a valid token', async () => {
    expect((await call(base, '/healthz')).status).toBe(200);
    for (const path of ['/api/v1/organism', '/api/v1/threads', '/metrics', '/api/v1/audit']) {
      const none = await call(base, path);
      expect(none.status, path).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await call(base, path, { token: 'not-a-real-token-at-all' })).status, path).toBe(401);
    }
    const malformed = await call(base, '/api/v1/organism', {
      headers: { authorization: `Basic ${ADMIN_TOKEN}` },
    });
    expect(malformed.status).toBe(401);
  });

  it('lets viewers read, operators inject, admins kill, pause and reload', async () => {
    const body = { to: 'greeter', payload: '<greeting><name>Roles</name></greeting>' };
    expect((await call(base, '/api/v1/organism', { token: VIEWER_TOKEN })).status).toBe(200);
    expect((await call(base, '/metrics', { token: VIEWER_TOKEN })).status).toBe(200);
    const viewerInject = await call(base, '/api/v1/inject', { token: VIEWER_TOKEN, body });
    expect(viewerInject.status).toBe(403);
    expect(viewerInject.json.error.code).toBe('auth.forbidden');
    const thread = (await call(base, '/api/v1/inject', { token: OPERATOR_TOKEN, body })).json
      .thread as string;
    expect(thread).toMatch(/^[0-9a-f-]{36}$/);

    for (const [method, path] of [
      ['POST', `/api/v1/threads/${thread}/kill`],
      ['POST', '/api/v1/listeners/printer/pause'],
      ['POST', '/api/v1/listeners/printer/resume'],
      ['POST', '/api/v1/organism/reload'],
    ] as const) {
      for (const token of [VIEWER_TOKEN, OPERATOR_TOKEN]) {
        const res = await call(base, path, { token, method });
        expect(res.status, `${path} as ${token}`).toBe(403);
        expect(res.json.error.message).toMatch(/needs the admin role/);
      }
    }
    expect((await api('/api/v1/listeners/printer/pause', { method: 'POST' })).status).toBe(200);
    expect((await api('/api/v1/listeners/printer/resume', { method: 'POST' })).status).toBe(200);
    expect((await api('/api/v1/organism/reload', { method: 'POST' })).status).toBe(200);
  });

  it('opens the stream to viewers only with a token', async () => {
    const refused = await wsStatus(`${base.replace('http', 'ws')}/api/v1/stream`, {});
    expect(refused).toBe(401);
    const accepted = await wsStatus(`${base.replace('http', 'ws')}/api/v1/stream`, {
      authorization: `Bearer ${VIEWER_TOKEN}`,
    });
    expect(accepted).toBe(101);
  });
});

describe('request hygiene', () => {
  it('sends security headers and refuses other sites and other hosts', async () => {
    const res = await api('/api/v1/organism');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('cache-control')).toBe('no-store');
    const crossSite = await api('/api/v1/organism/reload', {
      method: 'POST',
      headers: { origin: 'http://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.json.error.code).toBe('request.cross_origin');
    expect(
      await wsStatus(`${base.replace('http', 'ws')}/api/v1/stream`, {
        authorization: `Bearer ${VIEWER_TOKEN}`,
        origin: 'http://evil.example',
      }),
    ).toBe(403);
  });

  it('caps request bodies, declared or not, and the client reads the 413 (not a cut connection)', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024 + 10_000);
    // The server reads and drops a body of up to 4x the cap before it answers, so a client that
    // writes the whole body before reading (fetch does) gets the answer, every time.
    for (let i = 0; i < 5; i++) {
      const declared = await api('/api/v1/inject', { body: { to: 'greeter', payload: big } });
      expect(declared.status).toBe(413);
      expect(declared.json.error.code).toBe('request.too_large');
      // Chunked: no content-length, cut while reading.
      const stream = new ReadableStream({
        start(controller) {
          for (let j = 0; j < 40; j++) controller.enqueue(new TextEncoder().encode('x'.repeat(64 * 1024)));
          controller.close();
        },
      });
      const chunked = await fetch(`${base}/api/v1/inject`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status).toBe(413);
    }
    // Far past the drain bound the connection is cut at once: refused either way, and the daemon serves on.
    const huge = await fetch(`${base}/api/v1/inject`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: 'x'.repeat(12 * 1024 * 1024),
    }).then(
      (res) => res.status,
      (err: { cause?: { code?: string } }) => err.cause?.code ?? 'failed',
    );
    expect([413, 'EPIPE', 'ECONNRESET']).toContain(huge);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('explains bad query parameters', async () => {
    const res = await api('/api/v1/threads?status=sleeping');
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/status must be one of active, idle, stopped/);
    expect((await api('/api/v1/messages?limit=0')).status).toBe(400);
    expect((await api('/api/v1/threads?since=yesterday')).status).toBe(400);
    expect((await api('/api/v1/audit?verdict=maybe')).status).toBe(400);
  });
});

describe('reading the organism', () => {
  it('describes itself, its listeners and its tools', async () => {
    const info = (await api('/api/v1/organism')).json;
    expect(info).toMatchObject({ name: 'service-test', listeners: 6, auth: { enabled: true } });
    expect(info.auth.tokens).toEqual([
      { name: 'root', role: 'admin' },
      { name: 'ops', role: 'operator' },
      { name: 'watcher', role: 'viewer' },
    ]);
    expect(info.memory.rss_bytes).toBeGreaterThan(0);
    expect(info.history.persisted).toBe(true);

    const listeners = (await api('/api/v1/listeners')).json.listeners;
    expect(listeners.map((l: { name: string }) => l.name)).toEqual([
      'greeter',
      'shouter',
      'printer',
      'napper',
      'toolbox',
      'assistant',
    ]);
    expect(listeners[0].state).toEqual({
      paused: false,
      depth: 0,
      active: 0,
      capacity: 1000,
      concurrency: 16,
    });
    const greeter = (await api('/api/v1/listeners/greeter')).json;
    expect(greeter).toMatchObject({ name: 'greeter', tag: 'greeting', peers: ['shouter'] });
    expect((await api('/api/v1/listeners/greeter/schema')).json.xsd).toContain('<xs:element name="greeting"');
    expect((await api('/api/v1/listeners/greeter/example')).json.example).toMatch(/^<greeting>/);
    expect((await api('/api/v1/listeners/greeter/prompt')).json.prompt).toContain('greeting');
    expect((await api('/api/v1/listeners/nobody')).status).toBe(404);

    const all = (await api('/api/v1/tools')).json.tools;
    expect(all.map((t: { tool: string }) => t.tool)).toContain('calculate');
    const asToolbox = (await api('/api/v1/tools?as=toolbox')).json.tools;
    expect(asToolbox.find((t: { tool: string }) => t.tool === 'calculate')).toMatchObject({
      available: true,
    });
    expect(asToolbox.find((t: { tool: string }) => t.tool === 'run_command')).toMatchObject({
      available: false,
      reason: 'not granted to toolbox',
    });
    expect((await api('/api/v1/tools?as=nobody')).status).toBe(404);
  });

  it('shows the configuration with variable names, never their values', async () => {
    const config = (await api('/api/v1/organism/config')).json;
    expect(config.smtp.password_env).toBe('TEST_SMTP_PASSWORD');
    expect(config.web_search.api_key_env).toBe('TEST_SEARCH_KEY');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the reference as written in the file is the point
    expect(config.kv.url).toBe('redis://:${TEST_KV_PASS}@127.0.0.1:6399/0');
    expect(config.auth.tokens[0]).toEqual({ name: 'root', role: 'admin', token_env: 'TEST_ADMIN_TOKEN' });
    expect(config.listeners).toHaveLength(6);
  });

  it('lists threads with filters and pages, and messages across threads', async () => {
    const before = Date.now();
    const threads = [];
    for (const name of ['Ann', 'Bob', 'Cy'])
      threads.push(await inject(`<greeting><name>${name}</name></greeting>`, 'greeter'));
    for (const t of threads) await settled(t, 3);
    const recent = (await api(`/api/v1/threads?since=${before}&listener=printer&status=idle&limit=2`)).json;
    expect(recent.total).toBe(3);
    expect(recent.threads).toHaveLength(2);
    expect(recent.threads[0]).toMatchObject({ status: 'idle', messages: 3 });
    expect(recent.threads[0].participants).toEqual(
      expect.arrayContaining(['api', 'greeter', 'shouter', 'printer']),
    );
    const rest = (await api(`/api/v1/threads?since=${before}&listener=printer&limit=2&cursor=${recent.next}`))
      .json;
    expect(rest.threads).toHaveLength(1);
    expect(rest.next).toBeNull();
    expect(new Set([...recent.threads, ...rest.threads].map((t: { thread: string }) => t.thread))).toEqual(
      new Set(threads),
    );
    expect((await api('/api/v1/threads?listener=napper&since=' + before)).json.total).toBe(0);

    const page = (await api(`/api/v1/messages?listener=printer&kind=message&since=${before}&limit=2`)).json;
    expect(page.messages).toHaveLength(2);
    expect(page.messages.every((m: { to: string }) => m.to === 'printer')).toBe(true);
    const next = (
      await api(`/api/v1/messages?listener=printer&kind=message&since=${before}&limit=2&cursor=${page.next}`)
    ).json;
    expect(next.messages).toHaveLength(1);
    const texts = [...page.messages, ...next.messages].map((m: { payload: string }) => m.payload);
    expect(texts.sort()).toEqual([
      '<print><text>HELLO, ANN!</text><source>shouter</source></print>',
      '<print><text>HELLO, BOB!</text><source>shouter</source></print>',
      '<print><text>HELLO, CY!</text><source>shouter</source></print>',
    ]);
    const one = (await api(`/api/v1/messages?thread=${threads[0]}`)).json.messages;
    expect(one.map((m: { from: string }) => m.from)).toEqual(['shouter', 'greeter', 'api']);
  });

  it('pages the audit log newest first, filtered by tool, verdict and listener', async () => {
    for (const expression of ['1 + 1', '2 + 2', '3 + 3']) {
      const t = await inject(
        `<use-tool><tool>calculate</tool><args>{"expression": "${expression}"}</args></use-tool>`,
        'toolbox',
      );
      await settled(t, 4);
    }
    const t = await inject(
      '<use-tool><tool>run_command</tool><args>{"command": "ls"}</args></use-tool>',
      'toolbox',
    );
    await settled(t, 4);
    const first = (await api('/api/v1/audit?tool=calculate&listener=toolbox&limit=2')).json;
    expect(first.records).toHaveLength(2);
    expect(first.records.map((r: { input: { expression: string } }) => r.input.expression)).toEqual([
      '3 + 3',
      '2 + 2',
    ]);
    const second = (await api(`/api/v1/audit?tool=calculate&listener=toolbox&limit=2&cursor=${first.next}`))
      .json;
    expect(second.records.map((r: { input: { expression: string } }) => r.input.expression)).toEqual([
      '1 + 1',
    ]);
    expect(second.next).toBeNull();
    const refused = (await api('/api/v1/audit?tool=run_command')).json.records;
    expect(refused[0]).toMatchObject({ outcome: 'refused', code: 'PermissionDenied', verdict: null });
    expect((await api('/api/v1/audit?tool=run_command&verdict=none')).json.records).toHaveLength(1);
    expect((await api('/api/v1/audit?tool=run_command&verdict=deny')).json.records).toHaveLength(0);
  });
});

describe('operator actions', () => {
  it('kills a thread: queued work dropped, the running handler aborted, no more messages', async () => {
    const thread = await inject('<nap><ms>30000</ms></nap>', 'napper');
    await until(async () =>
      (await api(`/api/v1/threads/${thread}`)).json.status === 'active' ? true : undefined,
    );
    const killed = await api(`/api/v1/threads/${thread}/kill`, { method: 'POST' });
    expect(killed.status).toBe(200);
    expect(killed.json).toMatchObject({ thread, status: 'stopped', aborted: 1 });
    const view = await until(async () => {
      const v = (await api(`/api/v1/threads/${thread}`)).json;
      return v.status === 'stopped' ? v : undefined;
    });
    expect(view.messages.at(-1)).toMatchObject({ from: 'system', to: 'root', kind: 'system-error' });
    expect(view.messages.at(-1).payload).toContain('<code>thread.killed</code>');
    await until(() => (daemon.stdout().includes('nap cut short') ? true : undefined));
    const more = await api('/api/v1/inject', {
      body: { to: 'napper', payload: '<nap><ms>1</ms></nap>', thread },
    });
    expect(more.status).toBe(409);
    expect(
      (await api('/api/v1/threads/00000000-0000-0000-0000-000000000000/kill', { method: 'POST' })).status,
    ).toBe(404);
    expect(
      (await api(`/api/v1/threads?status=stopped`)).json.threads.map((t: { thread: string }) => t.thread),
    ).toContain(thread);
    const change = (await api('/api/v1/audit?type=change&limit=1')).json.records[0];
    expect(change).toMatchObject({ action: 'thread.killed', by: 'root', thread });
  });

  it('pauses a listener (messages wait in its queue) and resumes it (they run)', async () => {
    expect((await api('/api/v1/listeners/printer/pause', { method: 'POST' })).json.state.paused).toBe(true);
    const thread = await inject('<greeting><name>Paused</name></greeting>', 'greeter');
    await until(async () =>
      (await api('/api/v1/listeners/printer')).json.state.depth === 1 ? true : undefined,
    );
    expect((await api(`/api/v1/threads/${thread}`)).json.status).toBe('active');
    const metrics = (await api('/metrics')).text;
    expect(metric(metrics, 'organism_listener_paused', { listener: 'printer' })).toBe(1);
    expect(metric(metrics, 'organism_queue_depth', { listener: 'printer' })).toBe(1);
    const resumed = await api('/api/v1/listeners/printer/resume', { method: 'POST' });
    expect(resumed.json.state.paused).toBe(false);
    const view = await settled(thread, 3);
    expect(view.messages.at(-1).payload).toContain('HELLO, PAUSED!');
    const changes = (await api('/api/v1/audit?type=change&limit=2')).json.records;
    expect(changes.map((r: { action: string }) => r.action)).toEqual(['listener.resumed', 'listener.paused']);
    expect((await api('/api/v1/listeners/nobody/pause', { method: 'POST' })).status).toBe(404);
  });
});

describe('metrics', () => {
  it('are Prometheus text that moves with traffic', async () => {
    const before = (await api('/metrics')).text;
    expect((await api('/metrics')).headers.get('content-type')).toMatch(/^text\/plain/);
    const thread = await inject('<greeting><name>Metrics</name></greeting>', 'greeter');
    await settled(thread, 3);
    const t = await inject(
      '<use-tool><tool>calculate</tool><args>{"expression": "6 * 7"}</args></use-tool>',
      'toolbox',
    );
    await settled(t, 4);
    const after = (await api('/metrics')).text;
    for (const listener of ['greeter', 'shouter', 'printer']) {
      expect(metric(after, 'organism_messages_total', { listener, outcome: 'ok' })).toBe(
        metric(before, 'organism_messages_total', { listener, outcome: 'ok' }) + 1,
      );
      expect(metric(after, 'organism_hop_latency_seconds_count', { listener })).toBe(
        metric(before, 'organism_hop_latency_seconds_count', { listener }) + 1,
      );
    }
    expect(metric(after, 'organism_tool_calls_total', { tool: 'calculate', outcome: 'ok' })).toBe(
      metric(before, 'organism_tool_calls_total', { tool: 'calculate', outcome: 'ok' }) + 1,
    );
    expect(metric(after, 'organism_injects_total', { status: '202' })).toBeGreaterThan(
      metric(before, 'organism_injects_total', { status: '202' }),
    );
    expect(metric(after, 'organism_injects_total', { status: '403' })).toBeGreaterThan(0);
    expect(after).toContain('organism_queue_depth{listener="greeter"} 0');
    expect(after).toContain('# TYPE organism_llm_tokens_total counter');
    expect(metric(after, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);

    const ghost = await inject('<use-tool><tool>frobnicate</tool></use-tool>', 'toolbox');
    await settled(ghost, 3);
    const agent = await inject('<assistant><task>What is 20 + 22?</task></assistant>', 'assistant');
    await until(async () => {
      const v = (await api(`/api/v1/threads/${agent}`)).json;
      return v.messages.some(
        (m: { from: string; kind: string }) => m.from === 'assistant' && m.kind === 'response',
      )
        ? true
        : undefined;
    });
    const later = (await api('/metrics')).text;
    // A tool name nobody registered is counted as `unknown`: label values stay bounded.
    expect(
      metric(later, 'organism_tool_calls_total', { tool: 'unknown', outcome: 'refused' }),
    ).toBeGreaterThan(0);
    expect(later).not.toContain('tool="frobnicate"');
    // The agent's model tokens (the scripted provider estimates them), fed from its usage counters.
    expect(
      metric(later, 'organism_llm_tokens_total', { listener: 'assistant', direction: 'input' }),
    ).toBeGreaterThan(0);
    expect(
      metric(later, 'organism_llm_tokens_total', { listener: 'assistant', direction: 'output' }),
    ).toBeGreaterThan(0);
  });
});

describe('the live stream', () => {
  it('sends messages, tool calls with verdicts and lifecycle events, filtered', async () => {
    const ws = await openStream(
      '?listeners=printer,toolbox&kinds=message,tool,tool-call,tool-result,response',
    );
    const hello = await ws.next();
    expect(hello).toMatchObject({
      type: 'hello',
      organism: 'service-test',
      filter: { listeners: ['printer', 'toolbox'] },
    });
    const thread = await inject('<greeting><name>Stream</name></greeting>', 'greeter');
    const toPrinter = await ws.next();
    // Only the hop that involves the printer passes the listeners filter.
    expect(toPrinter).toMatchObject({
      type: 'message',
      kind: 'message',
      thread,
      message: { from: 'shouter', to: 'printer' },
    });
    const tool = await inject(
      '<use-tool><tool>calculate</tool><args>{"expression": "1 + 2"}</args></use-tool>',
      'toolbox',
    );
    const events = [await ws.next(), await ws.next(), await ws.next(), await ws.next(), await ws.next()];
    // The call is recorded, judged and audited (the tool event), then its result recorded.
    expect(events.map((e) => e.kind)).toEqual(['message', 'tool-call', 'tool', 'tool-result', 'response']);
    expect(events[2]).toMatchObject({ thread: tool, listener: 'toolbox', tool: 'calculate', outcome: 'ok' });
    expect(events[2]).toHaveProperty('verdict');
    await settled(thread, 3);
    await settled(tool, 4);

    ws.send({ subscribe: { kinds: ['lifecycle'], threads: [] } });
    expect(await ws.next()).toMatchObject({ type: 'subscribed', filter: { kinds: ['lifecycle'] } });
    await api('/api/v1/listeners/printer/pause', { method: 'POST' });
    expect(await ws.next()).toMatchObject({
      type: 'lifecycle',
      event: 'listener.paused',
      listener: 'printer',
      by: 'root',
    });
    await api('/api/v1/listeners/printer/resume', { method: 'POST' });
    expect(await ws.next()).toMatchObject({ event: 'listener.resumed' });
    const started = await inject('<greeting><name>Life</name></greeting>', 'greeter');
    expect(await ws.next()).toMatchObject({ event: 'thread.started', thread: started });
    expect(await ws.next()).toMatchObject({ event: 'thread.idle', thread: started });

    ws.send({ subscribe: { kinds: ['gossip'] } });
    expect((await ws.next()).message).toMatch(/unknown kind 'gossip'/);
    ws.close();
  });
});

describe('the CLI against the running daemon', () => {
  it('status, threads and tail use ORGANISM_TOKEN', async () => {
    const env = { ORGANISM_TOKEN: VIEWER_TOKEN };
    const status = await runCli(['status', '--url', base], env);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('organism service-test 0.1.0');
    expect(status.stdout).toMatch(/printer\s+0\/1000\s+0\s+running/);
    expect(status.stdout).toContain('auth: root (admin), ops (operator), watcher (viewer)');

    const refused = await runCli(['status', '--url', base], { ORGANISM_TOKEN: '' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('set ORGANISM_TOKEN to an API token');

    const thread = await inject('<greeting><name>Cli</name></greeting>', 'greeter');
    await settled(thread, 3);
    const list = await runCli(['threads', '--url', base, '--listener', 'printer', '-n', '1'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(thread);
    expect(list.stdout).toMatch(/more with --cursor \S+/);
    const one = await runCli(['threads', thread, '--url', base], env);
    expect(one.stdout.split('\n').slice(1, 4)).toEqual([
      'api -> greeter [message] <greeting><name>Cli</name></greeting>',
      'greeter -> shouter [message] <shout><text>Hello, Cli!</text></shout>',
      'shouter -> printer [message] <print><text>HELLO, CLI!</text><source>shouter</source></print>',
    ]);

    const tail = runCli(
      ['tail', '--url', base, '--listener', 'printer', '--kind', 'message', '--count', '1'],
      env,
    );
    await until(async () => ((await api('/api/v1/organism')).json.stream_clients > 0 ? true : undefined));
    const tailed = await inject('<greeting><name>Tail</name></greeting>', 'greeter');
    const done = await tail;
    expect(done.code).toBe(0);
    expect(done.stdout.trim()).toMatch(
      new RegExp(
        `^\\S+ ${tailed.slice(0, 8)} shouter -> printer \\[message\\] <print><text>HELLO, TAIL!</text>`,
      ),
    );
    seen.push(status.stdout, list.stdout, one.stdout, done.stdout);
  });
});

describe('secrets', () => {
  it('appear in no answer of any endpoint', async () => {
    const thread = await inject('<greeting><name>Secret</name></greeting>', 'greeter');
    await settled(thread, 3);
    for (const path of [
      '/api/v1/organism',
      '/api/v1/organism/config',
      '/api/v1/listeners',
      '/api/v1/listeners/toolbox',
      '/api/v1/threads',
      `/api/v1/threads/${thread}`,
      '/api/v1/messages?limit=1000',
      '/api/v1/audit?limit=1000',
      '/api/v1/tools',
      '/api/v1/tools?as=toolbox',
      '/metrics',
      '/healthz',
    ]) {
      expect((await api(path)).status, path).toBe(200);
    }
    const everything = seen.join('\n');
    expect(everything.length).toBeGreaterThan(10_000);
    for (const secret of SECRET_VALUES) expect(everything).not.toContain(secret);
    // The daemon's own log lines do not carry them either.
    for (const secret of SECRET_VALUES) expect(daemon.stdout()).not.toContain(secret);
  });
});

describe('starting safely', () => {
  it('refuses to listen beyond loopback without tokens, and names a missing token variable', async () => {
    const open = await organismDir(`organism:\n  name: open\nlisteners:\n${chainYaml()}`);
    await expect(startDaemonProcess(['--config', open.file, '--host', '0.0.0.0'])).rejects.toThrow(
      /refusing to listen on 0\.0\.0\.0 without authentication/,
    );
    const missing = await organismDir(`organism:\n  name: missing\n${AUTH_YAML}listeners:\n${chainYaml()}`);
    const error = await startOn(missing.file, {
      TEST_ADMIN_TOKEN: ADMIN_TOKEN,
      TEST_VIEWER_TOKEN: 'short',
    }).then(
      () => undefined,
      (e: Error) => e.message,
    );
    expect(error).toContain('environment variable TEST_OPERATOR_TOKEN is not set');
    expect(error).toContain('the token in TEST_VIEWER_TOKEN is shorter than 16 characters');
    expect(error).not.toContain(ADMIN_TOKEN);
  });

  it('says where it listens whatever log_level is, and keeps quiet at that level otherwise', async () => {
    for (const level of ['error', 'silent']) {
      const quiet = await organismDir(
        `organism:\n  name: quiet\n  log_level: ${level}\nlisteners:\n${chainYaml()}`,
      );
      const daemon = await startOn(quiet.file);
      try {
        const lines = daemon
          .stdout()
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line));
        const announced = lines.filter((line) => /listening on/.test(line.msg));
        expect(announced).toHaveLength(1);
        expect(announced[0].url).toBe(daemon.url);
        expect(announced[0].level).toBe(30); // info, above the configured level
        expect((await fetch(`${daemon.url}/healthz`)).status).toBe(200);
        // Nothing else at info got through: the level still holds for every other record.
        expect(lines.filter((line) => line.level < 40 && !/listening on/.test(line.msg))).toEqual([]);
      } finally {
        await daemon.stop();
      }
    }
  });
});

/** The HTTP status of a WebSocket handshake (101 when it opened). */
function wsStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => resolve(0));
  });
}

async function openStream(query: string) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v1/stream${query}`, {
    headers: { authorization: `Bearer ${VIEWER_TOKEN}` },
  });
  const queue: any[] = [];
  const waiting: Array<(v: any) => void> = [];
  ws.on('message', (data) => {
    const text = String(data);
    seen.push(text);
    const event = JSON.parse(text);
    const w = waiting.shift();
    if (w) w(event);
    else queue.push(event);
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    next: (): Promise<any> =>
      queue.length > 0
        ? Promise.resolve(queue.shift())
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no event in time')), 10_000);
            waiting.push((v) => {
              clearTimeout(timer);
              resolve(v);
            });
          }),
    send: (value: unknown) => ws.send(JSON.stringify(value)),
    close: () => ws.close(),
  };
}
