/**
 * GET /api/v1/openapi.json on the real daemon: a credential needed (any token), the document a
 * maintained OpenAPI 3.1 validator accepts, the same as docs/reference/http-api.json; and real
 * answers of the daemon, successes and errors, hold to the document: each status is one the
 * operation lists, each body validates (ajv, JSON Schema 2020-12) against the schema given there.
 */
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { REFERENCE_FILE } from '../../src/server/openapi/reference.ts';
import { CALL_LISTENERS } from '../e2e/call-support/organism.ts';
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
} from './helpers.ts';

const YAML = `organism:
  name: openapi-test
${AUTH_YAML}mcp:
  tools: [calculate]
  max_sessions: 2
listeners:
${CALL_LISTENERS}  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [calculate]
    tool_config:
      calculate: { approval: always }
`;

type Reply = Awaited<ReturnType<typeof call>>;

/** An MCP initialize request, as a client opens a session with. */
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'openapi-test', version: '1' },
  },
};

describe('GET /api/v1/openapi.json on the daemon', () => {
  let daemon: DaemonProcess;
  let doc: any;
  let ajv: Ajv2020;
  const checked = new Set<string>();

  /**
   * Asserts `reply` is what the document says `method template` answers: its status listed, its
   * body valid against that status's schema. Returns the body.
   */
  function conforms(method: string, template: string, reply: Reply): any {
    const op = doc.paths[template]?.[method];
    expect(op, `${method} ${template} in the document`).toBeDefined();
    let response = op.responses[String(reply.status)];
    expect(
      response,
      `${method} ${template} lists ${reply.status}: ${reply.text.slice(0, 200)}`,
    ).toBeDefined();
    if (response.$ref) response = doc.components.responses[response.$ref.split('/').pop()];
    const media = response.content?.['application/json'];
    if (media) {
      const validate = ajv.compile(
        JSON.parse(JSON.stringify(media.schema).replaceAll('"#/components/', '"served#/components/')),
      );
      const ok = validate(reply.json);
      expect(ok, `${method} ${template} ${reply.status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    checked.add(`${method} ${template} ${reply.status}`);
    return reply.json;
  }

  /** A JSON-RPC POST to /mcp as the operator, accepting JSON or a stream unless `headers` say otherwise. */
  const mcpPost = (body: unknown, headers: Record<string, string> = {}) =>
    call(daemon.url, '/mcp', {
      token: OPERATOR_TOKEN,
      body,
      headers: { accept: 'application/json, text/event-stream', ...headers },
    });

  beforeAll(async () => {
    const { file } = await organismDir(YAML);
    daemon = await startOn(file, TOKENS_ENV);
    const served = await call(daemon.url, '/api/v1/openapi.json', { token: VIEWER_TOKEN });
    expect(served.status).toBe(200);
    doc = served.json;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
    ajv.addSchema({ $id: 'served', components: doc.components });
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('needs a credential, any token; the validator accepts it; it is the committed reference', async () => {
    const anonymous = await call(daemon.url, '/api/v1/openapi.json', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.code).toBe('auth.required');
    conforms('get', '/api/v1/openapi.json', anonymous);

    const served = await call(daemon.url, '/api/v1/openapi.json', { token: VIEWER_TOKEN });
    expect(served.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await new Validator().validate(served.json)).toEqual({ valid: true });
    expect(served.json.openapi).toBe('3.1.0');
    // The daemon's document is the one in docs/reference (this daemon serves the dashboard too).
    expect(served.json).toEqual(JSON.parse(readFileSync(REFERENCE_FILE, 'utf8')));
    // It names nothing of this organism: no listener, no token name.
    for (const name of ['openapi-test', 'toolbox', 'quote', 'watcher', 'root']) {
      expect(served.text).not.toContain(`"${name}"`);
    }
  });

  it('the answers of inject, threads, messages and listeners hold to it', async () => {
    const injected = conforms(
      'post',
      '/api/v1/inject',
      await call(daemon.url, '/api/v1/inject', {
        token: OPERATOR_TOKEN,
        body: { to: 'greeter', payload: '<greeting><name>Ada</name></greeting>' },
      }),
    );
    expect(injected.thread).toEqual(expect.any(String));
    await until(async () => {
      const r = await call(daemon.url, `/api/v1/threads/${injected.thread}`, { token: VIEWER_TOKEN });
      return r.json?.status === 'idle' ? r : undefined;
    });
    const thread = conforms(
      'get',
      '/api/v1/threads/{id}',
      await call(daemon.url, `/api/v1/threads/${injected.thread.slice(0, 8)}`, { token: VIEWER_TOKEN }),
    );
    expect(thread.messages.length).toBeGreaterThanOrEqual(3);
    const page = conforms(
      'get',
      '/api/v1/threads',
      await call(daemon.url, '/api/v1/threads?limit=5', { token: VIEWER_TOKEN }),
    );
    expect(page.threads.length).toBeGreaterThan(0);
    conforms(
      'get',
      '/api/v1/messages',
      await call(daemon.url, '/api/v1/messages?kind=message', { token: VIEWER_TOKEN }),
    );
    conforms(
      'get',
      '/api/v1/listeners',
      await call(daemon.url, '/api/v1/listeners', { token: VIEWER_TOKEN }),
    );
    conforms(
      'get',
      '/api/v1/listeners/{name}',
      await call(daemon.url, '/api/v1/listeners/quote', { token: VIEWER_TOKEN }),
    );
    conforms(
      'get',
      '/api/v1/listeners/{name}/schema',
      await call(daemon.url, '/api/v1/listeners/quote/schema', { token: VIEWER_TOKEN }),
    );
    conforms(
      'post',
      '/api/v1/listeners/{name}/pause',
      await call(daemon.url, '/api/v1/listeners/slow/pause', { token: ADMIN_TOKEN, method: 'POST' }),
    );
    conforms(
      'post',
      '/api/v1/listeners/{name}/resume',
      await call(daemon.url, '/api/v1/listeners/slow/resume', { token: ADMIN_TOKEN, method: 'POST' }),
    );
    conforms(
      'post',
      '/api/v1/threads/{id}/kill',
      await call(daemon.url, `/api/v1/threads/${injected.thread}/kill`, {
        token: ADMIN_TOKEN,
        method: 'POST',
      }),
    );
  });

  it('the answers of call, its failures included, hold to it', async () => {
    const post = (body: unknown) => call(daemon.url, '/api/v1/call', { token: OPERATOR_TOKEN, body });
    const replied = conforms(
      'post',
      '/api/v1/call',
      await post({ to: 'quote', payload: '<quote-request><item>pen</item><qty>3</qty></quote-request>' }),
    );
    expect(replied.status).toBe('replied');
    const failed = conforms(
      'post',
      '/api/v1/call',
      await post({ to: 'broken', payload: '<break><text>x</text></break>' }),
    );
    expect(failed.error.code).toBe('call.failed');
    const late = conforms(
      'post',
      '/api/v1/call',
      await post({ to: 'slow', payload: '<slow><ms>2000</ms></slow>', timeout_ms: 50 }),
    );
    expect(late.error.code).toBe('call.timeout');
  });

  it('error answers hold to it: 401, 403, 400 with the huh, 422 with fields, 404, 400 request.query', async () => {
    conforms(
      'get',
      '/api/v1/threads',
      await call(daemon.url, '/api/v1/threads', { token: 'not-a-known-token-at-all' }),
    );
    const forbidden = conforms(
      'post',
      '/api/v1/inject',
      await call(daemon.url, '/api/v1/inject', { token: VIEWER_TOKEN, body: { payload: '<greeting/>' } }),
    );
    expect(forbidden.error.code).toBe('auth.forbidden');
    const malformed = conforms(
      'post',
      '/api/v1/inject',
      await call(daemon.url, '/api/v1/inject', {
        token: OPERATOR_TOKEN,
        body: { payload: '<greeting><name>' },
      }),
    );
    expect(malformed.error.code).toBe('xml.malformed');
    expect(malformed.huh).toContain('huh');
    const invalid = conforms(
      'post',
      '/api/v1/inject',
      await call(daemon.url, '/api/v1/inject', {
        token: OPERATOR_TOKEN,
        body: { payload: '<greeting><nom>x</nom></greeting>' },
      }),
    );
    expect(invalid.error.code).toBe('payload.invalid');
    expect(invalid.error.fields.length).toBeGreaterThan(0);
    const shape = conforms(
      'post',
      '/api/v1/inject',
      await call(daemon.url, '/api/v1/inject', { token: OPERATOR_TOKEN, body: { to: 3, payload: '<a/>' } }),
    );
    expect(shape.error.code).toBe('request.invalid');
    const missing = conforms(
      'get',
      '/api/v1/threads/{id}',
      await call(daemon.url, '/api/v1/threads/0123456789abcdef', { token: VIEWER_TOKEN }),
    );
    expect(missing.error.code).toBe('thread.not_found');
    conforms(
      'get',
      '/api/v1/listeners/{name}',
      await call(daemon.url, '/api/v1/listeners/nobody', { token: VIEWER_TOKEN }),
    );
    const query = conforms(
      'get',
      '/api/v1/threads',
      await call(daemon.url, '/api/v1/threads?limit=0', { token: VIEWER_TOKEN }),
    );
    expect(query.error.code).toBe('request.query');
  });

  it('the answers of tools, approvals, a tool call, audit and the organism hold to it', async () => {
    conforms(
      'get',
      '/api/v1/tools',
      await call(daemon.url, '/api/v1/tools?as=toolbox', { token: VIEWER_TOKEN }),
    );
    // A call that waits for a person: its approval, denied, and then the call's answer.
    const pendingCall = call(daemon.url, '/api/v1/tools/calculate/call', {
      token: ADMIN_TOKEN,
      body: { as: 'toolbox', args: { expression: '2 + 2' } },
    });
    const approvals = await until(async () => {
      const r = await call(daemon.url, '/api/v1/approvals', { token: VIEWER_TOKEN });
      return r.json?.approvals?.length ? r : undefined;
    });
    const [approval] = conforms('get', '/api/v1/approvals', approvals).approvals;
    conforms(
      'get',
      '/api/v1/approvals/{id}',
      await call(daemon.url, `/api/v1/approvals/${approval.id}`, { token: VIEWER_TOKEN }),
    );
    const denied = conforms(
      'post',
      '/api/v1/approvals/{id}/deny',
      await call(daemon.url, `/api/v1/approvals/${approval.id}/deny`, {
        token: OPERATOR_TOKEN,
        body: { reason: 'test' },
      }),
    );
    expect(denied.state, JSON.stringify(denied)).toBe('denied');
    conforms(
      'post',
      '/api/v1/approvals/{id}/approve',
      await call(daemon.url, `/api/v1/approvals/${approval.id}/approve`, {
        token: OPERATOR_TOKEN,
        method: 'POST',
      }),
    );
    const result = conforms('post', '/api/v1/tools/{tool}/call', await pendingCall);
    expect(result.result.status).toBe('refused');

    conforms(
      'get',
      '/api/v1/audit',
      await call(daemon.url, '/api/v1/audit?limit=20', { token: VIEWER_TOKEN }),
    );
    conforms('get', '/api/v1/organism', await call(daemon.url, '/api/v1/organism', { token: VIEWER_TOKEN }));
    conforms('get', '/api/v1/session', await call(daemon.url, '/api/v1/session', { token: OPERATOR_TOKEN }));
    conforms(
      'get',
      '/api/v1/metrics/series',
      await call(daemon.url, '/api/v1/metrics/series', { token: VIEWER_TOKEN }),
    );
    conforms(
      'get',
      '/api/v1/dead-letters',
      await call(daemon.url, '/api/v1/dead-letters', { token: VIEWER_TOKEN }),
    );
    conforms('get', '/healthz', await call(daemon.url, '/healthz', { token: null }));
    const metrics = conforms('get', '/metrics', await call(daemon.url, '/metrics', { token: VIEWER_TOKEN }));
    expect(metrics).toBeUndefined(); // text, not JSON
  });

  it('the answers of /mcp hold to it: a stateless call, an initialize, a session refused', async () => {
    const listed = conforms('post', '/mcp', await mcpPost({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    expect(listed.result.tools.map((t: { name: string }) => t.name)).toContain('calculate');
    const opened = await mcpPost(INITIALIZE);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('mcp-session-id')).toEqual(expect.any(String));
    checked.add('post /mcp initialize');
    const unknown = { 'mcp-session-id': 'no-such-session' };
    conforms('post', '/mcp', await mcpPost({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, unknown));
    const noSession = conforms(
      'get',
      '/mcp',
      await call(daemon.url, '/mcp', { token: VIEWER_TOKEN, headers: { accept: 'text/event-stream' } }),
    );
    expect(noSession.error.data.code).toBe('mcp.session_required');
    conforms(
      'delete',
      '/mcp',
      await call(daemon.url, '/mcp', { token: VIEWER_TOKEN, method: 'DELETE', headers: unknown }),
    );
  });

  it("/mcp's session answers hold to it: 406, a stream open twice 409, DELETE 200, over max_sessions 503", async () => {
    const notAccepted = conforms('post', '/mcp', await mcpPost(INITIALIZE, { accept: 'text/html' }));
    expect(notAccepted.error.code).toBeLessThan(0); // a JSON-RPC error, as the document says
    // max_sessions is 2 (an earlier test may hold one): initializes succeed until one is refused.
    const opened: string[] = [];
    let refused: Reply | undefined;
    for (let i = 0; i < 3 && !refused; i++) {
      const reply = await mcpPost(INITIALIZE);
      if (reply.status === 200) opened.push(reply.headers.get('mcp-session-id')!);
      else refused = reply;
    }
    expect(opened.length).toBeGreaterThanOrEqual(1);
    expect(refused?.status).toBe(503);
    expect(conforms('post', '/mcp', refused!).error.data.code).toBe('mcp.session_limit');
    expect(refused!.headers.get('retry-after')).toBe('1');
    const a = opened[0]!;
    const sessionHeaders = (id: string) => ({
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-06-18',
    });
    // A session's stream, open; a second GET on it is refused with 409.
    const first = new AbortController();
    const open = await fetch(`${daemon.url}/mcp`, {
      headers: {
        ...sessionHeaders(a),
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        accept: 'text/event-stream',
      },
      signal: first.signal,
    });
    expect(open.status).toBe(200);
    checked.add('get /mcp 200');
    const again = await call(daemon.url, '/mcp', {
      token: OPERATOR_TOKEN,
      headers: { ...sessionHeaders(a), accept: 'text/event-stream' },
    });
    conforms('get', '/mcp', again);
    expect(again.status).toBe(409);
    first.abort();
    await open.body?.cancel().catch(() => {});
    for (const id of opened) {
      const ended = await call(daemon.url, '/mcp', {
        token: OPERATOR_TOKEN,
        method: 'DELETE',
        headers: sessionHeaders(id),
      });
      expect(ended.status).toBe(200);
      checked.add('delete /mcp 200');
    }
  });

  it('every route the document names is served by the daemon (no request.not_found, no 405)', async () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths) as Array<[string, Record<string, any>]>) {
      for (const [method, op] of Object.entries(item)) {
        if (path === '/api/v1/stream') continue; // a WebSocket upgrade: the stream test above
        const url = path.replace(/\{file\}/, 'app.js').replace(/\{\w+\}/g, 'abcdefgh12');
        // The viewer's token: any state-changing route refuses it (403) before it acts.
        const reply = await call(daemon.url, url, {
          token: VIEWER_TOKEN,
          method: method.toUpperCase(),
          headers: { accept: 'application/json, text/event-stream' },
          ...(method === 'post' ? { body: {} } : {}),
        });
        const code = reply.json?.error?.code;
        if (reply.status === 405 || code === 'request.not_found' || !(String(reply.status) in op.responses))
          missing.push(`${method.toUpperCase()} ${path}: ${reply.status} ${reply.text.slice(0, 120)}`);
      }
    }
    expect(missing).toEqual([]);
    expect(Object.keys(doc.paths).length).toBeGreaterThan(25);
  });

  it('the stream: 101 for any token, the documented refusals otherwise', async () => {
    const upgrade = (query: string, headers: Record<string, string>) =>
      new Promise<{ status: number; text: string }>((resolve) => {
        const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/stream${query}`, { headers });
        ws.on('open', () => {
          ws.close();
          resolve({ status: 101, text: '' });
        });
        ws.on('unexpected-response', (_request, response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => {
            text += chunk;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        });
      });
    const answer = async (query: string, headers: Record<string, string>) => {
      const { status, text } = await upgrade(query, headers);
      return conforms('get', '/api/v1/stream', {
        status,
        text,
        json: text ? JSON.parse(text) : undefined,
      } as Reply);
    };
    expect(await answer('', { authorization: `Bearer ${VIEWER_TOKEN}` })).toBeUndefined();
    expect((await answer('', {})).error.code).toBe('auth.required');
    const query = await answer('?kinds=nonsense', { authorization: `Bearer ${VIEWER_TOKEN}` });
    expect(query.error.code).toBe('request.query');
  });

  it('those answers covered most operations and statuses', () => {
    expect(checked.size).toBeGreaterThan(30);
  });
});
