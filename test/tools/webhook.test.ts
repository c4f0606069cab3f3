import { describe, expect, it } from 'vitest';
import { checkCall } from '../../src/guard/index.ts';
import type { Dispatcher } from '../../src/tools/dispatcher.ts';
import { DNS_LOOKUP_RESOURCE, type DnsLookup } from '../../tools/lib/net-pin.ts';
import webhook from '../../tools/webhook.ts';
import { closedPort, serverPerTest } from './net-helpers.ts';
import { caught, makeContext, toolDispatcher } from './tool-helpers.ts';

const LOOPBACK = { allow_loopback: true };

const serve = serverPerTest();

const ctx = (config: Record<string, unknown> = LOOPBACK, extra: Parameters<typeof makeContext>[0] = {}) =>
  makeContext({ config, ...extra });

describe('webhook: delivery', () => {
  it('POSTs the payload as JSON with an Idempotency-Key of the call id', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 201;
      res.end('{"accepted":true}');
    });
    const payload = { event: 'build.done', id: 42, tags: ['a', 'b'], nested: { ok: true }, none: null };
    const out = await webhook.run({ url: `${s.url}/hook`, payload }, ctx(LOOPBACK, { callId: 'call-7f3a' }));
    expect(out).toEqual({ status_code: 201, response: '{"accepted":true}', truncated: false });
    const seen = s.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/hook');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['idempotency-key']).toBe('call-7f3a');
    expect(JSON.parse(seen.body)).toEqual(payload);
  });

  it('PUT works too, and any JSON value is a payload', async () => {
    const s = await serve((req, res, body) => res.end(`${req.method} ${body}`));
    expect((await webhook.run({ url: s.url, payload: [1, 'two'], method: 'PUT' }, ctx())).response).toBe(
      'PUT [1,"two"]',
    );
    expect((await webhook.run({ url: s.url, payload: 'text' }, ctx())).response).toBe('POST "text"');
  });

  it('a repeated delivery of the same call carries the same key, so the receiver can drop it', async () => {
    const seen = new Set<string>();
    const s = await serve((req, res) => {
      const key = String(req.headers['idempotency-key']);
      res.end(seen.has(key) ? 'duplicate' : 'processed');
      seen.add(key);
    });
    const first = await webhook.run(
      { url: s.url, payload: { n: 1 } },
      ctx(LOOPBACK, { callId: 'same-call' }),
    );
    const retry = await webhook.run(
      { url: s.url, payload: { n: 1 } },
      ctx(LOOPBACK, { callId: 'same-call' }),
    );
    const other = await webhook.run(
      { url: s.url, payload: { n: 1 } },
      ctx(LOOPBACK, { callId: 'other-call' }),
    );
    expect([first.response, retry.response, other.response]).toEqual(['processed', 'duplicate', 'processed']);
  });

  it('a 5xx is a result with its status, not an error', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 503;
      res.end('try later');
    });
    expect(await webhook.run({ url: s.url, payload: {} }, ctx())).toEqual({
      status_code: 503,
      response: 'try later',
      truncated: false,
    });
  });

  it('caps the response at tool_config max_bytes', async () => {
    const s = await serve((_req, res) => res.end('r'.repeat(100_000)));
    const out = await webhook.run({ url: s.url, payload: {} }, ctx({ ...LOOPBACK, max_bytes: 10 }));
    expect(out).toEqual({ status_code: 200, response: 'r'.repeat(10), truncated: true });
  });
});

describe('webhook: redirects', () => {
  it('follows 307 with the same method, body and key', async () => {
    const s = await serve((req, res, body) => {
      if (req.url === '/old') {
        res.statusCode = 307;
        res.setHeader('location', '/new');
        res.end();
      } else res.end(`${req.method} ${req.headers['idempotency-key']} ${body}`);
    });
    const out = await webhook.run(
      { url: `${s.url}/old`, payload: { a: 1 } },
      ctx(LOOPBACK, { callId: 'k1' }),
    );
    expect(out.response).toBe('POST k1 {"a":1}');
  });

  it('does not turn its POST into a GET: a 302/303 is returned as it is', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 303;
      res.setHeader('location', '/elsewhere');
      res.end('see other');
    });
    const out = await webhook.run({ url: s.url, payload: {} }, ctx());
    expect(out).toMatchObject({ status_code: 303, response: 'see other' });
    expect(s.requests).toHaveLength(1);
  });

  it('refuses a 307 to a private address', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 307;
      res.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
      res.end();
    });
    const error = await caught(() => webhook.run({ url: s.url, payload: {} }, ctx()));
    expect(error.code).toBe('net.refused');
    expect(error.details).toMatchObject({ hop: 1 });
  });
});

describe('webhook: the web guard and pinning', () => {
  it('refuses loopback without allow_loopback and sends nothing', async () => {
    const s = await serve((_req, res) => res.end('ok'));
    const error = await caught(() => webhook.run({ url: s.url, payload: { x: 1 } }, ctx({})));
    expect(error.code).toBe('net.refused');
    expect(s.requests).toHaveLength(0);
  });

  it('delivers to the address the guard checked, not to a later DNS answer', async () => {
    const a = await serve((_req, res) => res.end('wrong'));
    const b = await serve((_req, res) => res.end('right'), '127.0.0.2', a.port);
    let calls = 0;
    const lookup: DnsLookup = async () => {
      calls++;
      return [{ address: calls === 1 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    };
    const out = await webhook.run(
      { url: `http://hooks.example:${a.port}/`, payload: {} },
      ctx(LOOPBACK, { resources: { [DNS_LOOKUP_RESOURCE]: lookup } }),
    );
    expect(out.response).toBe('right');
    expect(calls).toBe(1);
    expect(b.requests).toHaveLength(1);
    expect(a.requests).toHaveLength(0);
  });
});

describe('webhook: bad arguments', () => {
  it.each([
    [{ url: 'nope', payload: {} }, 'net.bad_url'],
    [{ url: 'gopher://example.com/', payload: {} }, 'net.bad_url'],
    [{ url: 'http://example.com/', payload: {}, method: 'GET' }, 'net.method_not_allowed'],
    [{ url: 'http://example.com/', payload: 'x'.repeat(1024 * 1024 + 1) }, 'net.bad_body'],
    [{ url: 'http://example.com/' }, 'net.bad_body'],
  ])('%#: %s', async (args, code) => {
    const error = await caught(() => webhook.run(args as never, ctx()));
    expect(error.code).toBe(code);
  });
});

describe('webhook: the receiver failing', () => {
  it('receiver down -> connection refused', async () => {
    const port = await closedPort();
    const error = await caught(() =>
      webhook.run({ url: `http://127.0.0.1:${port}/hook`, payload: {} }, ctx()),
    );
    expect(error.code).toBe('net.connection_refused');
  });

  it('receiver that never answers -> timeout at tool_config timeout_ms', async () => {
    const s = await serve(() => {});
    const error = await caught(() =>
      webhook.run({ url: s.url, payload: {} }, ctx({ ...LOOPBACK, timeout_ms: 250 })),
    );
    expect(error.code).toBe('net.timeout');
    expect(error.message).toContain('within 250 ms');
    expect(s.requests).toHaveLength(1); // it was delivered; only the answer was missing
  });
});

describe('webhook through the Dispatcher and the real guard', () => {
  function dispatcher(toolConfig: Record<string, unknown>): Dispatcher {
    return toolDispatcher({
      tools: [webhook],
      listener: { name: 'notifier', tools: ['webhook'], tool_config: { webhook: toolConfig } },
      guard: checkCall,
    });
  }

  it('delivers with the call id as Idempotency-Key, and is refused by the guard without allow_loopback', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 202;
      res.end('queued');
    });
    const request = {
      tool: 'webhook',
      args: { url: s.url, payload: { a: 1 } },
      listener: 'notifier',
      thread: 't1',
    };
    const ok = await dispatcher({ allow_loopback: true }).call({ ...request, callId: 'dispatch-42' });
    expect(ok).toEqual({
      status: 'ok',
      tool: 'webhook',
      value: { status_code: 202, response: 'queued', truncated: false },
    });
    expect(s.requests[0]!.headers['idempotency-key']).toBe('dispatch-42');
    expect(JSON.parse(s.requests[0]!.body)).toEqual({ a: 1 });
    const denied = await dispatcher({}).call(request);
    expect(denied).toMatchObject({
      status: 'refused',
      error: { code: 'GuardDenied', rule_id: 'web.loopback' },
    });
    expect(s.requests).toHaveLength(1);
  });
});
