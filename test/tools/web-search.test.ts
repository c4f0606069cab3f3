import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestConfigInput, testConfig } from '../../src/testing/index.ts';
import type { Dispatcher } from '../../src/tools/dispatcher.ts';
import webSearch from '../../tools/web-search.ts';
import { closedPort, serverPerTest } from './net-helpers.ts';
import { caught, makeContext, toolDispatcher } from './tool-helpers.ts';

const KEY_ENV = `ORGANISM_TEST_BRAVE_KEY_${process.pid}`;
const KEY = 'brv-secret-0123456789abcdef';

function searxngAnswer(n: number) {
  return {
    query: 'q',
    number_of_results: n,
    results: Array.from({ length: n }, (_, i) => ({
      url: `https://example.org/page-${i}`,
      title: `Page &amp; ${i}`,
      content: `About <b>page</b> ${i}`,
      engine: 'duckduckgo',
    })),
  };
}

function braveAnswer(n: number) {
  return {
    type: 'search',
    query: { original: 'q' },
    web: {
      type: 'search',
      results: Array.from({ length: n }, (_, i) => ({
        title: `Brave ${i}`,
        url: `https://brave.example/r${i}`,
        description: `Result <strong>number</strong> ${i} &#x2014; more`,
        type: 'search_result',
      })),
    },
  };
}

const serve = serverPerTest();

beforeAll(() => {
  process.env[KEY_ENV] = KEY;
});
afterAll(() => {
  delete process.env[KEY_ENV];
});

function searxCtx(url: string, extra: Record<string, unknown> = {}) {
  return makeContext({ sections: { web_search: { provider: 'searxng', url, timeout_ms: 5000, ...extra } } });
}
function braveCtx(url: string, extra: Record<string, unknown> = {}) {
  return makeContext({
    sections: { web_search: { provider: 'brave', url, api_key_env: KEY_ENV, timeout_ms: 5000, ...extra } },
  });
}

describe('web_search: searxng', () => {
  it('asks GET {url}/search?q=...&format=json and returns title, url, snippet', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(searxngAnswer(8)));
    });
    const out = await webSearch.run({ query: 'organism xml bus', num_results: 3 }, searxCtx(s.url));
    expect(out.provider).toBe('searxng');
    expect(out.results).toEqual([
      { title: 'Page & 0', url: 'https://example.org/page-0', snippet: 'About page 0' },
      { title: 'Page & 1', url: 'https://example.org/page-1', snippet: 'About page 1' },
      { title: 'Page & 2', url: 'https://example.org/page-2', snippet: 'About page 2' },
    ]);
    expect(s.requests).toHaveLength(1);
    const seen = new URL(s.requests[0]!.url, s.url);
    expect(s.requests[0]!.method).toBe('GET');
    expect(seen.pathname).toBe('/search');
    expect(seen.searchParams.get('q')).toBe('organism xml bus');
    expect(seen.searchParams.get('format')).toBe('json');
  });

  it('defaults to 5 results and keeps a path prefix of the base URL', async () => {
    const s = await serve((_req, res) => res.end(JSON.stringify(searxngAnswer(12))));
    const out = await webSearch.run({ query: 'x' }, searxCtx(`${s.url}/searx/`));
    expect(out.results).toHaveLength(5);
    expect(new URL(s.requests[0]!.url, s.url).pathname).toBe('/searx/search');
  });

  it('skips hits without an http(s) url', async () => {
    const s = await serve((_req, res) =>
      res.end(
        JSON.stringify({
          results: [
            { title: 'bad', url: 'javascript:alert(1)' },
            { title: 'ok', url: 'http://a.example/' },
          ],
        }),
      ),
    );
    const out = await webSearch.run({ query: 'x' }, searxCtx(s.url));
    expect(out.results).toEqual([{ title: 'ok', url: 'http://a.example/', snippet: '' }]);
  });

  it('a 403 (JSON format disabled) says how to fix it', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 403;
      res.end('Forbidden');
    });
    const error = await caught(() => webSearch.run({ query: 'x' }, searxCtx(s.url)));
    expect(error.code).toBe('search.provider_status');
    expect(error.message).toContain('HTTP 403');
    expect(error.message).toContain('search.formats');
  });

  it('an answer that is not JSON, or has no results list, is a bad response', async () => {
    const s = await serve((req, res) =>
      res.end(req.url?.includes('q=html') ? '<html>hi</html>' : '{"answers": []}'),
    );
    expect((await caught(() => webSearch.run({ query: 'html' }, searxCtx(s.url)))).code).toBe(
      'search.bad_response',
    );
    const error = await caught(() => webSearch.run({ query: 'json' }, searxCtx(s.url)));
    expect(error.code).toBe('search.bad_response');
    expect(error.message).toContain('no results list');
  });
});

describe('web_search: brave', () => {
  it('asks /res/v1/web/search?q=&count= with X-Subscription-Token and maps web.results', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(braveAnswer(2)));
    });
    const out = await webSearch.run({ query: 'brave search', num_results: 7 }, braveCtx(s.url));
    expect(out).toEqual({
      provider: 'brave',
      results: [
        { title: 'Brave 0', url: 'https://brave.example/r0', snippet: 'Result number 0 \u2014 more' },
        { title: 'Brave 1', url: 'https://brave.example/r1', snippet: 'Result number 1 \u2014 more' },
      ],
    });
    const req = s.requests[0]!;
    const seen = new URL(req.url, s.url);
    expect(seen.pathname).toBe('/res/v1/web/search');
    expect(seen.searchParams.get('q')).toBe('brave search');
    expect(seen.searchParams.get('count')).toBe('7');
    expect(req.headers['x-subscription-token']).toBe(KEY);
    expect(req.headers.accept).toBe('application/json');
    expect(JSON.stringify(out)).not.toContain(KEY);
  });

  it('no web section means no results', async () => {
    const s = await serve((_req, res) =>
      res.end(JSON.stringify({ type: 'search', query: { original: 'x' } })),
    );
    expect((await webSearch.run({ query: 'x' }, braveCtx(s.url))).results).toEqual([]);
  });

  it('a 401 names the environment variable and never the key', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 401;
      res.end(JSON.stringify({ error: { detail: 'bad token' } }));
    });
    const error = await caught(() => webSearch.run({ query: 'x' }, braveCtx(s.url)));
    expect(error.code).toBe('search.provider_status');
    expect(error.message).toContain(KEY_ENV);
    expect(error.message).not.toContain(KEY);
    expect(JSON.stringify(error.details)).not.toContain(KEY);
  });
});

describe('web_search: availability', () => {
  it('is unavailable, with the reason, when web_search is not configured', async () => {
    const ctx = makeContext();
    expect(webSearch.unavailable!(ctx.services)).toMatch(
      /web_search is not configured: add a web_search section/,
    );
    const error = await caught(() => webSearch.run({ query: 'x' }, ctx));
    expect(error.code).toBe('search.not_configured');
  });

  it('brave is unavailable when the key variable is unset, naming the variable', () => {
    const ctx = makeContext({
      sections: { web_search: { provider: 'brave', api_key_env: 'ORGANISM_TEST_UNSET_KEY_XYZ' } },
    });
    expect(webSearch.unavailable!(ctx.services)).toBe(
      'the environment variable ORGANISM_TEST_UNSET_KEY_XYZ (web_search.api_key_env) is not set or empty',
    );
    // The loader refuses brave without api_key_env; the tool does not rely on that.
    const noEnv = makeContext({ unchecked: { web_search: { provider: 'brave' } } });
    expect(webSearch.unavailable!(noEnv.services)).toMatch(/api_key_env is not set/);
  });

  it('searxng without a url is unavailable; configured providers are available', () => {
    expect(
      webSearch.unavailable!(makeContext({ unchecked: { web_search: { provider: 'searxng' } } }).services),
    ).toMatch(/web_search.url is not set/);
    expect(webSearch.unavailable!(searxCtx('http://127.0.0.1:1').services)).toBeNull();
    expect(webSearch.unavailable!(braveCtx('http://127.0.0.1:1').services)).toBeNull();
  });
});

describe('web_search: bad arguments', () => {
  it.each([
    [{ query: '   ' }, /query is empty/],
    [{ query: 'x'.repeat(401) }, /longer than 400/],
    [{ query: 'x', num_results: 0 }, /1 to 20/],
    [{ query: 'x', num_results: 21 }, /1 to 20/],
    [{ query: 'x', num_results: 2.5 }, /1 to 20/],
  ])('%j', async (args, message) => {
    const error = await caught(() => webSearch.run(args, searxCtx('http://127.0.0.1:1')));
    expect(error.code).toBe('search.bad_query');
    expect(error.message).toMatch(message);
  });
});

describe('web_search: the provider failing', () => {
  it('server down -> connection refused', async () => {
    const port = await closedPort();
    const error = await caught(() => webSearch.run({ query: 'x' }, searxCtx(`http://127.0.0.1:${port}`)));
    expect(error.code).toBe('net.connection_refused');
    expect(error.message).toContain(`127.0.0.1:${port}`);
  });

  it('a provider that never answers is aborted at web_search.timeout_ms', async () => {
    const s = await serve(() => {}); // never responds
    const error = await caught(() => webSearch.run({ query: 'x' }, searxCtx(s.url, { timeout_ms: 300 })));
    expect(error.code).toBe('net.timeout');
    expect(error.message).toContain('within 300 ms');
  });

  it('the call being cancelled aborts the request', async () => {
    const s = await serve(() => {});
    const controller = new AbortController();
    const ctx = makeContext({
      signal: controller.signal,
      sections: { web_search: { provider: 'searxng', url: s.url, timeout_ms: 10_000 } },
    });
    setTimeout(() => controller.abort(new Error('shutting down')), 100);
    const error = await caught(() => webSearch.run({ query: 'x' }, ctx));
    expect(error.code).toBe('net.aborted');
    expect(error.message).toContain('shutting down');
  });
});

describe('web_search through the Dispatcher', () => {
  function dispatcher(webSearchSection: TestConfigInput['web_search']): Dispatcher {
    const config = testConfig(webSearchSection === undefined ? {} : { web_search: webSearchSection });
    return toolDispatcher({
      tools: [webSearch],
      listener: { name: 'researcher', tools: ['web_search'] },
      guard: () => {
        throw new Error('web_search has no guard and must not be judged by one');
      },
      config,
    });
  }
  const call = (d: Dispatcher, args: unknown) =>
    d.call({ tool: 'web_search', args, listener: 'researcher', thread: 't1' });

  it('searches with the default num_results, and says unavailable when not configured', async () => {
    const s = await serve((_req, res) => res.end(JSON.stringify(searxngAnswer(9))));
    const ok = await call(dispatcher({ provider: 'searxng', url: s.url, timeout_ms: 5000 }), { query: 'x' });
    expect(ok.status).toBe('ok');
    expect(ok.status === 'ok' && (ok.value as { results: unknown[] }).results).toHaveLength(5);
    const off = await call(dispatcher(undefined), { query: 'x' });
    expect(off).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    expect(off.status !== 'ok' && off.error.message).toContain('web_search is not configured');
    expect(
      await call(dispatcher({ provider: 'searxng', url: s.url }), { query: 'x', num_results: 50 }),
    ).toMatchObject({
      status: 'refused',
      error: { code: 'InvalidArguments' },
    });
  });
});
