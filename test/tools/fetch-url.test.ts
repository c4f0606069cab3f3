import { describe, expect, it } from 'vitest';
import { checkCall } from '../../src/guard/index.ts';
import type { Dispatcher } from '../../src/tools/dispatcher.ts';
import fetchUrl from '../../tools/fetch-url.ts';
import { DNS_LOOKUP_RESOURCE, type DnsLookup, type ResolvedAddress } from '../../tools/lib/net-pin.ts';
import { closedPort, serverPerTest } from './net-helpers.ts';
import { caught, makeContext, toolDispatcher } from './tool-helpers.ts';

const LOOPBACK = { allow_loopback: true };

const serve = serverPerTest();

const ctx = (config: Record<string, unknown> = LOOPBACK, extra: Parameters<typeof makeContext>[0] = {}) =>
  makeContext({ config, ...extra });

describe('fetch_url: success', () => {
  it('GETs a page: status, headers, text body, final_url', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.setHeader('x-custom', 'yes');
      res.end('héllo wörld');
    });
    const out = await fetchUrl.run({ url: `${s.url}/page?x=1`, headers: { 'X-Trace': 'abc' } }, ctx());
    expect(out).toMatchObject({
      status_code: 200,
      body: 'héllo wörld',
      body_encoding: 'utf8',
      truncated: false,
      final_url: `${s.url}/page?x=1`,
    });
    expect(out.headers['x-custom']).toBe('yes');
    expect(out.headers['content-type']).toBe('text/plain; charset=utf-8');
    const seen = s.requests[0]!;
    expect(seen.method).toBe('GET');
    expect(seen.url).toBe('/page?x=1');
    expect(seen.headers['x-trace']).toBe('abc');
    expect(seen.headers['user-agent']).toBe('Organism-fetch_url/0.1');
  });

  it('POSTs a JSON body with a JSON content type, and text as text/plain', async () => {
    const s = await serve((req, res, body) => res.end(`${req.headers['content-type']}|${body}`));
    const json = await fetchUrl.run({ url: s.url, method: 'POST', body: '{"a": 1}' }, ctx());
    expect(json.body).toBe('application/json|{"a": 1}');
    const text = await fetchUrl.run({ url: s.url, method: 'PUT', body: 'plain words' }, ctx());
    expect(text.body).toBe('text/plain; charset=utf-8|plain words');
    const own = await fetchUrl.run(
      {
        url: s.url,
        method: 'POST',
        body: 'a=1',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      },
      ctx(),
    );
    expect(own.body).toBe('application/x-www-form-urlencoded|a=1');
    expect(s.requests.map((r) => r.method)).toEqual(['POST', 'PUT', 'POST']);
  });

  it('returns binary bodies as base64 with the flag', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff, 0xfe]);
    const s = await serve((req, res) => {
      if (req.url === '/img') res.setHeader('content-type', 'image/png');
      res.end(req.url === '/img' ? png : Buffer.from([0xc3, 0x28, 0xa0, 0xa1])); // second: invalid UTF-8, no type
    });
    const img = await fetchUrl.run({ url: `${s.url}/img` }, ctx());
    expect(img.body_encoding).toBe('base64');
    expect(Buffer.from(img.body, 'base64').equals(png)).toBe(true);
    const raw = await fetchUrl.run({ url: `${s.url}/raw` }, ctx());
    expect(raw).toMatchObject({
      body_encoding: 'base64',
      body: Buffer.from([0xc3, 0x28, 0xa0, 0xa1]).toString('base64'),
    });
  });

  it('decodes text in the charset the server names', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=ISO-8859-1');
      res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
    });
    expect((await fetchUrl.run({ url: s.url }, ctx())).body).toBe('café');
  });

  it('HEAD returns status and headers with an empty body; 4xx/5xx are results, not errors', async () => {
    const s = await serve((req, res) => {
      res.statusCode = req.url === '/missing' ? 404 : 200;
      res.setHeader('content-length', '5');
      res.end(req.method === 'HEAD' ? undefined : 'nope!');
    });
    const head = await fetchUrl.run({ url: s.url, method: 'HEAD' }, ctx());
    expect(head).toMatchObject({ status_code: 200, body: '', truncated: false });
    expect(head.headers['content-length']).toBe('5');
    const missing = await fetchUrl.run({ url: `${s.url}/missing` }, ctx());
    expect(missing).toMatchObject({ status_code: 404, body: 'nope!' });
  });
});

describe('fetch_url: response size', () => {
  it('keeps max_bytes of a large body and says truncated', async () => {
    const s = await serve((_req, res) => res.end('x'.repeat(300_000)));
    const out = await fetchUrl.run({ url: s.url }, ctx({ ...LOOPBACK, max_bytes: 1000 }));
    expect(out.truncated).toBe(true);
    expect(out.body).toBe('x'.repeat(1000));
  });

  it('stops reading an endless body at the limit', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'text/plain');
      const chunk = 'y'.repeat(16_384);
      const timer = setInterval(() => res.write(chunk), 1);
      res.on('close', () => clearInterval(timer));
    });
    const out = await fetchUrl.run({ url: s.url }, ctx({ ...LOOPBACK, max_bytes: 100_000 }));
    expect(out.truncated).toBe(true);
    expect(out.body.length).toBe(100_000);
  });

  it('a body of exactly max_bytes is not truncated', async () => {
    const s = await serve((_req, res) => res.end('z'.repeat(500)));
    const out = await fetchUrl.run({ url: s.url }, ctx({ ...LOOPBACK, max_bytes: 500 }));
    expect(out).toMatchObject({ truncated: false, body: 'z'.repeat(500) });
  });

  it('a cut inside a multi-byte character drops the partial character', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.end('ééé'); // 6 bytes
    });
    const out = await fetchUrl.run({ url: s.url }, ctx({ ...LOOPBACK, max_bytes: 3 }));
    expect(out).toMatchObject({ body: 'é', truncated: true, body_encoding: 'utf8' });
  });
});

describe('fetch_url: redirects', () => {
  it('follows a chain of redirects and reports the final URL', async () => {
    const s = await serve((req, res) => {
      const n = Number(req.url?.slice(1) || 0);
      if (n < 3) {
        res.statusCode = 302;
        res.setHeader('location', `/${n + 1}`);
        res.end();
      } else res.end(`arrived at ${n}`);
    });
    const out = await fetchUrl.run({ url: `${s.url}/0` }, ctx());
    expect(out).toMatchObject({ status_code: 200, body: 'arrived at 3', final_url: `${s.url}/3` });
    expect(s.requests.map((r) => r.url)).toEqual(['/0', '/1', '/2', '/3']);
  });

  it('303 turns a POST into a GET without body; 307 repeats the POST with its body', async () => {
    const s = await serve((req, res, body) => {
      if (req.url === '/see-other' || req.url === '/temporary') {
        res.statusCode = req.url === '/see-other' ? 303 : 307;
        res.setHeader('location', '/done');
        res.end();
      } else res.end(`${req.method} ${body}`);
    });
    const seeOther = await fetchUrl.run({ url: `${s.url}/see-other`, method: 'POST', body: 'data' }, ctx());
    expect(seeOther.body).toBe('GET ');
    const temporary = await fetchUrl.run({ url: `${s.url}/temporary`, method: 'POST', body: 'data' }, ctx());
    expect(temporary.body).toBe('POST data');
  });

  it('does not carry Authorization or Cookie to another origin', async () => {
    const other = await serve((req, res) =>
      res.end(`auth=${req.headers.authorization ?? 'none'} cookie=${req.headers.cookie ?? 'none'}`),
    );
    const first = await serve((req, res) => {
      res.statusCode = 302;
      res.setHeader('location', req.url === '/same' ? '/landing' : `${other.url}/landing`);
      res.end();
    });
    const headers = { Authorization: 'Bearer t0ken', Cookie: 'sid=1' };
    const away = await fetchUrl.run({ url: `${first.url}/away`, headers }, ctx());
    expect(away.body).toBe('auth=none cookie=none');
    await fetchUrl.run({ url: `${first.url}/same`, headers }, ctx());
    expect(first.requests[1]!.headers.authorization).toBe('Bearer t0ken');
  });

  it('stops after max_redirects with a clear error', async () => {
    const s = await serve((req, res) => {
      res.statusCode = 301;
      res.setHeader('location', `${req.url}x`);
      res.end();
    });
    const error = await caught(() =>
      fetchUrl.run({ url: `${s.url}/r` }, ctx({ ...LOOPBACK, max_redirects: 2 })),
    );
    expect(error.code).toBe('net.too_many_redirects');
    expect(error.message).toMatch(/stopped after 2 redirects/);
    expect(s.requests).toHaveLength(3);
  });

  it('max_redirects 0 returns the redirect itself', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', '/elsewhere');
      res.end('moved');
    });
    const out = await fetchUrl.run({ url: s.url }, ctx({ ...LOOPBACK, max_redirects: 0 }));
    expect(out).toMatchObject({ status_code: 302, body: 'moved' });
    expect(out.headers.location).toBe('/elsewhere');
  });
});

describe('fetch_url: the web guard', () => {
  it('refuses 127.0.0.1 unless tool_config allows loopback, and never connects', async () => {
    const s = await serve((_req, res) => res.end('secret'));
    const error = await caught(() => fetchUrl.run({ url: s.url }, ctx({})));
    expect(error.code).toBe('net.refused');
    expect(error.message).toMatch(/refused by the web guard/);
    expect(error.details?.rule_id).toEqual(expect.any(String));
    expect(s.requests).toHaveLength(0);
  });

  it('refuses a redirect to a private address, checked on that hop', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', 'http://10.20.30.40/admin');
      res.end();
    });
    const error = await caught(() => fetchUrl.run({ url: s.url }, ctx()));
    expect(error.code).toBe('net.refused');
    expect(error.message).toContain('the redirect to http://10.20.30.40');
    expect(error.details).toMatchObject({ hop: 1 });
  });

  it('refuses a redirect to a non-http scheme', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', 'file:///etc/passwd');
      res.end();
    });
    const error = await caught(() => fetchUrl.run({ url: s.url }, ctx()));
    expect(error.code).toBe('net.refused');
    expect(error.message).toMatch(/only http and https are followed/);
  });
});

describe('fetch_url: the connection goes to the checked address', () => {
  /** A resolver whose answer changes after the first question, as in DNS rebinding. */
  function rebinding(first: ResolvedAddress[], later: ResolvedAddress[]): DnsLookup & { calls: string[] } {
    const calls: string[] = [];
    const lookup = async (host: string) => {
      calls.push(host);
      return calls.length === 1 ? first : later;
    };
    return Object.assign(lookup, { calls });
  }

  it('a host resolving to two addresses is dialled at a checked one, never at a later answer', async () => {
    const a = await serve((_req, res) => res.end('A (127.0.0.1: not checked)'));
    const b = await serve((_req, res) => res.end('B (127.0.0.2: checked)'), '127.0.0.2', a.port);
    const lookup = rebinding(
      [
        { address: '127.0.0.2', family: 4 },
        { address: '127.0.0.3', family: 4 },
      ],
      [{ address: '127.0.0.1', family: 4 }],
    );
    const out = await fetchUrl.run(
      { url: `http://pinned.example:${a.port}/` },
      ctx(LOOPBACK, { resources: { [DNS_LOOKUP_RESOURCE]: lookup } }),
    );
    expect(out.body).toBe('B (127.0.0.2: checked)');
    expect(lookup.calls).toEqual(['pinned.example']);
    expect(a.requests).toHaveLength(0);
    expect(b.requests[0]!.localAddress).toBe('127.0.0.2');
    // The name stays in the URL: the server sees its own host name, not the address.
    expect(b.requests[0]!.headers.host).toBe(`pinned.example:${a.port}`);
  });

  it('each redirect hop is resolved and checked again, and pinned to its own answer', async () => {
    const target = await serve((_req, res) => res.end('final'), '127.0.0.2');
    const start = await serve((_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', `http://second.example:${target.port}/end`);
      res.end();
    });
    const calls: string[] = [];
    const lookup: DnsLookup = async (host) => {
      calls.push(host);
      return [{ address: host === 'first.example' ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    const out = await fetchUrl.run(
      { url: `http://first.example:${start.port}/` },
      ctx(LOOPBACK, { resources: { [DNS_LOOKUP_RESOURCE]: lookup } }),
    );
    expect(out).toMatchObject({ body: 'final', final_url: `http://second.example:${target.port}/end` });
    expect(calls).toEqual(['first.example', 'second.example']);
  });

  it('a host whose only answer is private is refused before connecting', async () => {
    const lookup: DnsLookup = async () => [{ address: '192.168.1.10', family: 4 }];
    const error = await caught(() =>
      fetchUrl.run(
        { url: 'http://intranet.example/' },
        ctx(LOOPBACK, { resources: { [DNS_LOOKUP_RESOURCE]: lookup } }),
      ),
    );
    expect(error.code).toBe('net.refused');
  });
});

describe('fetch_url: bad arguments', () => {
  it.each([
    [{ url: 'not a url' }, 'net.bad_url', /is not an absolute URL/],
    [{ url: 'ftp://example.com/file' }, 'net.bad_url', /must use http or https, not ftp/],
    [{ url: 'http://user:pw@example.com/' }, 'net.bad_url', /must not contain a user name or password/],
    [
      { url: 'http://example.com/', headers: { Host: 'other.example' } },
      'net.bad_header',
      /Host is set by the transport/,
    ],
    [
      { url: 'http://example.com/', headers: { 'Transfer-Encoding': 'chunked' } },
      'net.bad_header',
      /set by the transport/,
    ],
    [
      { url: 'http://example.com/', headers: { 'X-A': 'v\r\nX-Injected: 1' } },
      'net.bad_header',
      /line break/,
    ],
    [
      { url: 'http://example.com/', headers: { 'bad name': 'v' } },
      'net.bad_header',
      /not a valid HTTP header name/,
    ],
    [{ url: 'http://example.com/', body: 'x' }, 'net.bad_body', /a GET request cannot have a body/],
    [
      { url: 'http://example.com/', method: 'PATCH' },
      'net.method_not_allowed',
      /must be one of GET, HEAD, POST, PUT, DELETE/,
    ],
  ])('%j -> %s', async (args, code, message) => {
    const error = await caught(() => fetchUrl.run(args as never, ctx()));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  it('a method outside tool_config allowed_methods is refused', async () => {
    const error = await caught(() =>
      fetchUrl.run(
        { url: 'http://example.com/', method: 'DELETE' },
        ctx({ allowed_methods: ['GET', 'HEAD'] }),
      ),
    );
    expect(error.code).toBe('net.method_not_allowed');
    expect(error.message).toContain('allowed_methods: GET, HEAD');
  });

  it('a bad tool_config limit is an error, not silently replaced', async () => {
    const error = await caught(() => fetchUrl.run({ url: 'http://example.com/' }, ctx({ max_bytes: -1 })));
    expect(error.code).toBe('net.bad_config');
    expect(error.message).toContain('max_bytes');
  });
});

describe('fetch_url: the outside world failing', () => {
  it('server down -> connection refused', async () => {
    const port = await closedPort();
    const error = await caught(() => fetchUrl.run({ url: `http://127.0.0.1:${port}/` }, ctx()));
    expect(error.code).toBe('net.connection_refused');
    expect(error.message).toBe(`connection refused by http://127.0.0.1:${port} (nothing is listening there)`);
  });

  it('no response within tool_config timeout_ms -> timeout', async () => {
    const s = await serve(() => {});
    const error = await caught(() => fetchUrl.run({ url: s.url }, ctx({ ...LOOPBACK, timeout_ms: 300 })));
    expect(error.code).toBe('net.timeout');
    expect(error.message).toBe(`no complete response from ${s.url} within 300 ms; the request was aborted`);
  });

  it('a body that stalls after the headers -> timeout', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const error = await caught(() => fetchUrl.run({ url: s.url }, ctx({ ...LOOPBACK, timeout_ms: 300 })));
    expect(error.code).toBe('net.timeout');
  });

  it('the call being cancelled aborts the request', async () => {
    const s = await serve(() => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('timed out after 100 ms')), 100);
    const error = await caught(() =>
      fetchUrl.run({ url: s.url }, ctx(LOOPBACK, { signal: controller.signal })),
    );
    expect(error.code).toBe('net.aborted');
    expect(error.message).toBe(`the request to ${s.url} was cancelled: timed out after 100 ms`);
  });

  it('a connection closed mid-response is reported as such', async () => {
    const s = await serve((req) => req.socket.destroy());
    const error = await caught(() => fetchUrl.run({ url: s.url }, ctx()));
    expect(error.code).toBe('net.connection_reset');
  });
});

describe('fetch_url through the Dispatcher and the real guard', () => {
  function dispatcher(toolConfig: Record<string, unknown>): Dispatcher {
    return toolDispatcher({
      tools: [fetchUrl],
      listener: { name: 'browser', tools: ['fetch_url'], tool_config: { fetch_url: toolConfig } },
      guard: checkCall,
    });
  }
  const call = (d: Dispatcher, args: unknown) =>
    d.call({ tool: 'fetch_url', args, listener: 'browser', thread: 't1' });

  it('fetches, refuses loopback before running, refuses a redirect hop while running', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/inside') {
        res.statusCode = 302;
        res.setHeader('location', 'http://10.0.0.8/');
      }
      res.end('hello');
    });
    const ok = await call(dispatcher({ allow_loopback: true }), { url: s.url });
    expect(ok).toMatchObject({
      status: 'ok',
      value: { status_code: 200, body: 'hello', body_encoding: 'utf8' },
    });
    const denied = await call(dispatcher({}), { url: s.url });
    expect(denied).toMatchObject({
      status: 'refused',
      error: { code: 'GuardDenied', rule_id: 'web.loopback' },
    });
    const hop = await call(dispatcher({ allow_loopback: true }), { url: `${s.url}/inside` });
    expect(hop).toMatchObject({ status: 'refused', error: { code: 'net.refused', rule_id: 'web.private' } });
    expect(hop.status !== 'ok' && hop.error.message).toContain(
      'the redirect to http://10.0.0.8 was refused by the web guard (web.private)',
    );
    expect(s.requests.map((r) => r.url)).toEqual(['/', '/inside']);
  });

  it('its tool_config keys are checked when the organism starts', () => {
    expect(() => dispatcher({ allow_loopbak: true })).toThrow(/tool_config\.fetch_url\.allow_loopbak/);
    expect(() => dispatcher({ max_bytes: 0 })).toThrow(/max_bytes/);
    expect(() =>
      dispatcher({ allowed_domains: ['example.com'], allowed_ports: [8080], max_redirects: 3 }),
    ).not.toThrow();
  });
});
