/**
 * What the daemon serves for the dashboard, without a browser: the page and its modules without a
 * token but with their own Content-Security-Policy, and nothing that loads from elsewhere; the API
 * still closed without a token; GET /api/v1/session per role; the stream taking the token as a
 * WebSocket subprotocol (never echoing it), and refusing a wrong one or another site's page;
 * the audit's thread filter.
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DASHBOARD_CSP } from '../../src/server/dashboard/index.ts';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  LISTENERS,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';

const YAML = `organism:
  name: dashboard-server-test
${AUTH_YAML}listeners:
  - name: helper
    agent: true
    description: Works out arithmetic with the calculate tool.
    prompt: Be brief.
    tools: [calculate]
llm:
  backends:
    - { provider: scripted, script: ${LISTENERS}assistant.script.yaml }
`;

const protocolFor = (token: string) => `organism.token.${Buffer.from(token).toString('base64url')}`;

/** Opens the stream with `protocols` (and `headers`); resolves with the socket, or the refusal's status. */
function connect(
  url: string,
  protocols: string[],
  headers: Record<string, string> = {},
): Promise<{ ws: WebSocket; hello: any; protocolHeader: string | undefined } | { status: number }> {
  return new Promise((resolve, reject) => {
    let protocolHeader: string | undefined;
    const ws = new WebSocket(`${url.replace('http', 'ws')}/api/v1/stream`, protocols, { headers });
    ws.once('upgrade', (res) => {
      protocolHeader = res.headers['sec-websocket-protocol'] as string | undefined;
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('message', (data) => resolve({ ws, hello: JSON.parse(String(data)), protocolHeader }));
    ws.once('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

describe('the dashboard as the daemon serves it', () => {
  let daemon: DaemonProcess;
  let url: string;

  beforeAll(async () => {
    const made = await organismDir('');
    await writeFile(made.file, YAML);
    daemon = await startOn(made.file, TOKENS_ENV);
    url = daemon.url;
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop('SIGKILL');
  });

  it('serves the page and its modules without a token, under their own CSP, all from this origin', async () => {
    const page = await call(url, '/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.text).toContain('src="/dashboard/app.js"');

    // Every module the page loads, followed from app.js: served here, importing only relative paths.
    const seen = new Set<string>();
    const queue = ['/dashboard/app.js'];
    while (queue.length > 0) {
      const path = queue.pop()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await call(url, path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toContain('text/javascript');
      for (const m of res.text.matchAll(/(?:from|import)\s*["']([^"']+)["']/g)) {
        const spec = m[1]!;
        expect(spec.startsWith('./') || spec.startsWith('../'), `${path} imports ${spec}`).toBe(true);
        queue.push(new URL(spec, `http://x${path}`).pathname);
      }
    }
    expect(seen).toContain('/dashboard/vendor/preact.js');
    expect(seen).toContain('/dashboard/vendor/hooks.js');
    expect(seen).toContain('/dashboard/vendor/htm.js');

    const gz = await fetch(`${url}/dashboard/vendor/preact.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect((await gz.text()).length).toBeGreaterThan(1000);

    const missing = await call(url, '/dashboard/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('request.not_found');
  });

  it('the API stays closed without a token and keeps its own policy; /session says who and what', async () => {
    const closed = await call(url, '/api/v1/threads');
    expect(closed.status).toBe(401);
    expect(closed.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect((await call(url, '/api/v1/session')).status).toBe(401);

    const viewer = await call(url, '/api/v1/session', { token: VIEWER_TOKEN });
    expect(viewer.json).toMatchObject({
      name: 'watcher',
      role: 'viewer',
      organism: 'dashboard-server-test',
      auth: true,
      can: { inject: false, approve: false, pause: false, kill: false },
    });
    const operator = await call(url, '/api/v1/session', { token: OPERATOR_TOKEN });
    expect(operator.json.can).toMatchObject({ inject: true, approve: true, pause: false, kill: false });
    const admin = await call(url, '/api/v1/session', { token: ADMIN_TOKEN });
    expect(admin.json.can).toMatchObject({ inject: true, approve: true, pause: true, kill: true });
  });

  it('the stream takes the token as a subprotocol and never echoes it; a wrong one, none, or another site is refused', async () => {
    const ok = await connect(url, ['organism.v1', protocolFor(VIEWER_TOKEN)]);
    if (!('ws' in ok)) throw new Error(`refused with ${ok.status}`);
    expect(ok.hello.type).toBe('hello');
    expect(ok.ws.protocol).toBe('organism.v1');
    expect(ok.protocolHeader).toBe('organism.v1');
    ok.ws.close();

    expect(await connect(url, ['organism.v1', protocolFor('wrong-token-0123456789')])).toEqual({
      status: 401,
    });
    expect(await connect(url, ['organism.v1', 'organism.token.not.base64url'])).toEqual({ status: 401 });
    expect(await connect(url, ['organism.v1'])).toEqual({ status: 401 });
    // A page on another site that learned a token still cannot open the stream from a browser.
    expect(
      await connect(url, ['organism.v1', protocolFor(VIEWER_TOKEN)], { origin: 'http://evil.example' }),
    ).toEqual({ status: 403 });
    expect(daemon.stdout()).not.toContain(VIEWER_TOKEN);
  });

  it('GET /api/v1/metrics/series: the last minutes of traffic, one point per interval (viewer)', async () => {
    expect((await call(url, '/api/v1/metrics/series')).status).toBe(401);
    await call(url, '/api/v1/inject', {
      token: OPERATOR_TOKEN,
      body: { to: 'helper', payload: '<helper><task>What is 1 + 1?</task></helper>' },
    });
    const page = await until(async () => {
      const res = await call(url, '/api/v1/metrics/series', { token: VIEWER_TOKEN });
      return res.json.points.some((p: any) => p.messages_per_second > 0) ? res.json : undefined;
    }, 30_000);
    expect(page.interval_ms).toBe(5000);
    const busy = page.points.find((p: any) => p.messages_per_second > 0);
    expect(busy.hop_latency_ms).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(busy.time))).toBe(false);
  }, 40_000);

  it('the audit filters by thread (the thread view joins calls to their messages)', async () => {
    const threads: string[] = [];
    for (const task of ['What is 2 + 3?', 'What is 7 * 6?']) {
      const res = await call(url, '/api/v1/inject', {
        token: OPERATOR_TOKEN,
        body: { to: 'helper', payload: `<helper><task>${task}</task></helper>` },
      });
      expect(res.status).toBe(202);
      threads.push(res.json.thread);
    }
    for (const thread of threads) {
      const records = await until(async () => {
        const res = await call(url, `/api/v1/audit?type=call&thread=${thread}`, { token: VIEWER_TOKEN });
        return res.json.records.length > 0 ? res.json.records : undefined;
      });
      expect(records.every((r: any) => r.thread === thread)).toBe(true);
      expect(records.map((r: any) => r.tool)).toContain('calculate');
    }
  }, 30_000);
});

describe('server.dashboard: false', () => {
  let daemon: DaemonProcess;

  beforeAll(async () => {
    const made = await organismDir('');
    await writeFile(made.file, YAML.replace('organism:\n', 'server:\n  dashboard: false\norganism:\n'));
    daemon = await startOn(made.file, TOKENS_ENV);
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop('SIGKILL');
  });

  it('serves no page and no dashboard file; the API and its stream are as before', async () => {
    // Without a token these paths are like any other unknown to the API: 401 before the 404.
    for (const path of ['/', '/dashboard/app.js', '/dashboard/vendor/preact.js']) {
      const anonymous = await call(daemon.url, path);
      expect(anonymous.status, path).toBe(401);
      const signedIn = await call(daemon.url, path, { token: VIEWER_TOKEN });
      expect(signedIn.status, path).toBe(404);
      expect(signedIn.json.error.code, path).toBe('request.not_found');
    }
    expect((await call(daemon.url, '/api/v1/threads')).status).toBe(401);
    const listed = await call(daemon.url, '/api/v1/threads', { token: VIEWER_TOKEN });
    expect(listed.status).toBe(200);
    const stream = await connect(daemon.url, ['organism.v1', protocolFor(VIEWER_TOKEN)]);
    expect('ws' in stream).toBe(true);
    if ('ws' in stream) stream.ws.close();
  });
});
