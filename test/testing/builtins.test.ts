/**
 * organism/testing with Organism's own tools by name: the real tools behind the real dispatcher,
 * their stores in the test's temp folder (filled and read by the test), webhook and send_email
 * recorded instead of sent, and the tools that would leave the process refused unless faked or
 * named in `live`.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/index.ts';
import {
  BUILTIN_TOOLS,
  type TestedListener,
  TestKitError,
  type TestListenerOptions,
  testListener,
} from '../../src/testing/index.ts';
import { loadToolCatalog } from '../../src/tools/catalog.ts';
import { call, caller } from './caller.ts';

const open: TestedListener[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function start(options: TestListenerOptions): Promise<TestedListener> {
  const t = await testListener(caller, { name: 'support', ...options });
  open.push(t);
  return t;
}

/** A local HTTP server counting what reaches it. */
async function receiver(): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('real receiver');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

describe('built-in tools by name', () => {
  it('names every tool Organism ships (BUILTIN_TOOLS is the catalog, in the same order)', async () => {
    const catalog = (await loadToolCatalog()).map((e) => e.definition.name);
    expect([...BUILTIN_TOOLS]).toEqual(catalog);
  });

  it('key_value_set and key_value_get use one store the test fills first and reads after', async () => {
    const t = await start({
      tools: ['key_value_get', 'key_value_set'],
      config: { tool_config: { key_value_get: { allowed_namespaces: ['shared'] } } },
    });
    await t.kv.set('greeting', 'hello');
    await t.kv.set('motd', 'from elsewhere', 'shared');
    expect(await call(t, 'key_value_get', { key: 'greeting' })).toMatchObject({
      status: 'ok',
      value: { found: true, value: 'hello' },
    });
    expect(await call(t, 'key_value_get', { key: 'motd', namespace: 'shared' })).toMatchObject({
      value: { found: true, value: 'from elsewhere' },
    });
    expect(await call(t, 'key_value_set', { key: 'count', value: { n: 3 } })).toMatchObject({ status: 'ok' });
    expect(await t.kv.get('count')).toEqual({ n: 3 });
    expect(await t.kv.get('absent')).toBeUndefined();
    // The tool's own rules hold: a namespace its tool_config does not allow is refused.
    const refused = await call(t, 'key_value_set', { key: 'x', value: 1, namespace: 'shared' });
    expect(refused).toMatchObject({ status: 'error', error: { code: 'kv.namespace_denied' } });
    expect(await t.kv.get('x', 'shared')).toBeUndefined();
  });

  it('the librarian tools use the embedded librarian, which the test fills and reads by path', async () => {
    const t = await start({ tools: ['librarian_store', 'librarian_get', 'librarian_query'] });
    expect(t.librarian.collection).toBe('/db/organism');
    expect(
      await t.librarian.store('kb/reset.xml', '<article><title>Reset a password</title></article>'),
    ).toBe('/db/organism/kb/reset.xml');
    expect(await call(t, 'librarian_get', { path: 'kb/reset.xml' })).toMatchObject({
      status: 'ok',
      value: { path: '/db/organism/kb/reset.xml', content: expect.stringContaining('Reset a password') },
    });
    const queried = await call(t, 'librarian_query', {
      query: "collection('/db/organism/kb')//title/string()",
    });
    expect(queried).toMatchObject({ status: 'ok', value: { hits: 1, results: ['Reset a password'] } });
    await call(t, 'librarian_store', {
      collection: 'tickets',
      document_name: '7.xml',
      content: '<ticket><n>7</n></ticket>',
    });
    expect(await t.librarian.get('/db/organism/tickets/7.xml')).toContain('<n>7</n>');
    expect(await t.librarian.get('tickets/8.xml')).toBeUndefined();
    expect((await t.librarian.list('tickets')).documents.map((d) => d.name)).toEqual(['7.xml']);
  });

  it('webhook is recorded, not sent: not even to a receiver on loopback that the guard allows', async () => {
    const real = await receiver();
    const t = await start({
      tools: ['webhook'],
      config: { tool_config: { webhook: { allow_loopback: true } } },
    });
    const result = await call(t, 'webhook', { url: `${real.url}/hook`, payload: { event: 'filed', n: 1 } });
    expect(result).toEqual({
      status: 'ok',
      tool: 'webhook',
      value: { status_code: 200, response: '', truncated: false },
    });
    expect(real.hits).toEqual([]);
    expect(t.webhooks).toHaveLength(1);
    const [sent] = t.webhooks;
    expect(sent).toMatchObject({
      url: `${real.url}/hook`,
      method: 'POST',
      payload: { event: 'filed', n: 1 },
      body: '{"event":"filed","n":1}',
      headers: { 'content-type': 'application/json' },
    });
    // The real tool built the request: its idempotency key is the call's id.
    expect(sent!.headers['idempotency-key']).toMatch(/.+/);
  });

  it('webhooks.respond() sets the receiver answer, as an object or per request; max_bytes cuts it', async () => {
    const t = await start({
      tools: ['webhook'],
      config: { tool_config: { webhook: { allowed_domains: ['hooks.example.com'], max_bytes: 10 } } },
    });
    t.webhooks.respond({ status: 503, body: 'down for maintenance' });
    expect(await call(t, 'webhook', { url: 'https://hooks.example.com/a', payload: 1 })).toMatchObject({
      value: { status_code: 503, response: 'down for m', truncated: true },
    });
    t.webhooks.respond((request) => ({ status: 201, body: { got: request.payload } }));
    expect(
      await call(t, 'webhook', { url: 'https://hooks.example.com/b', payload: 2, method: 'PUT' }),
    ).toMatchObject({ value: { status_code: 201, response: '{"got":2}', truncated: false } });
    expect(t.webhooks.map((w) => `${w.method} ${w.url}`)).toEqual([
      'POST https://hooks.example.com/a',
      'PUT https://hooks.example.com/b',
    ]);
    // The web guard judges first: a domain tool_config does not allow is refused and not recorded.
    const refused = await call(t, 'webhook', { url: 'https://evil.example.net/', payload: 3 });
    expect(refused).toMatchObject({ status: 'refused', error: { code: 'GuardDenied' } });
    expect(t.webhooks).toHaveLength(2);
    expect(() => t.webhooks.respond({ status: 42 })).toThrow('status must be a whole number from 100 to 599');
  });

  it('send_email is recorded with its recipients, subject and body; the email guard and the tool still judge', async () => {
    const t = await start({
      tools: ['send_email'],
      config: { tool_config: { send_email: { allowed_recipients: ['*@example.com'] } } },
    });
    const sent = await call(t, 'send_email', {
      to: ['Ada <ada@example.com>'],
      cc: 'bob@example.com',
      subject: 'Ticket 42',
      body: 'We are on it.',
    });
    expect(sent).toMatchObject({
      status: 'ok',
      value: { accepted: ['ada@example.com', 'bob@example.com'], rejected: [] },
    });
    expect([...t.emails]).toEqual([
      {
        from: 'organism@example.com',
        to: ['ada@example.com'],
        cc: ['bob@example.com'],
        subject: 'Ticket 42',
        text: 'We are on it.',
        message_id: sent.value.message_id,
      },
    ]);
    const outside = await call(t, 'send_email', { to: 'eve@evil.test', subject: 'x', body: 'y' });
    expect(outside).toMatchObject({ status: 'refused', error: { code: 'GuardDenied' } });
    const injected = await call(t, 'send_email', {
      to: 'ada@example.com',
      subject: 'a\r\nBcc: eve@evil.test',
      body: 'y',
    });
    expect(injected.status).not.toBe('ok');
    expect(t.emails).toHaveLength(1);
  });

  it("send_email's from is organism.yaml's smtp.from when the test gives an smtp section", async () => {
    const t = await start({
      tools: ['send_email'],
      config: { tool_config: { send_email: { allowed_recipients: ['*@example.com'] } } },
      organism: { smtp: { host: 'mail.example.com', from: 'Support <support@example.com>' } },
    });
    const sent = await call(t, 'send_email', {
      to: 'ada@example.com',
      subject: 'Hi',
      body: '<p>Hi</p>',
      html: true,
    });
    expect(sent).toMatchObject({ status: 'ok' });
    expect(t.emails.map((m) => [m.from, m.html, m.text])).toEqual([
      ['support@example.com', '<p>Hi</p>', undefined],
    ]);
  });

  it('keeps the audit records of the calls in memory', async () => {
    const t = await start({ tools: ['calculate', 'key_value_get'] });
    await call(t, 'calculate', { expression: '6 * 7' });
    await call(t, 'key_value_get', { key: 'k', namespace: 'approvals' });
    expect(t.audit.map((r) => r.type === 'call' && [r.tool, r.outcome, r.code])).toEqual([
      ['calculate', 'ok', null],
      ['key_value_get', 'error', 'kv.namespace_denied'],
    ]);
  });

  it('refuses run_command, fetch_url and web_search by name unless faked or live, saying how', async () => {
    for (const tool of ['run_command', 'fetch_url', 'web_search'] as const) {
      const error = await testListener(caller, { tools: [tool] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TestKitError);
      expect(error).toMatchObject({ code: 'testing.needs_fake' });
      expect((error as Error).message).toContain(`fakes: { ${tool}: (args) => result }`);
      expect((error as Error).message).toContain(`live: ['${tool}']`);
    }
  });

  it("fakes: runs the test's function in place of a built-in, under its arguments, tool_config and guard", async () => {
    const seen: unknown[] = [];
    const t = await start({
      tools: ['fetch_url'],
      fakes: {
        fetch_url: (args: { url: string }) => {
          seen.push(args);
          return { status_code: 200, body: `fake page of ${args.url}` };
        },
      },
      config: { tool_config: { fetch_url: { allowed_domains: ['example.com'] } } },
    });
    expect(await call(t, 'fetch_url', { url: 'https://example.com/' })).toMatchObject({
      status: 'ok',
      value: { body: 'fake page of https://example.com/' },
    });
    // The built-in's argument schema (defaults applied) reaches the fake...
    expect(seen).toEqual([expect.objectContaining({ url: 'https://example.com/', method: 'GET' })]);
    // ...and the real web guard judges the fake's calls, as the built-in's.
    expect(await call(t, 'fetch_url', { url: 'https://elsewhere.test/' })).toMatchObject({
      status: 'refused',
      error: { code: 'GuardDenied' },
    });
    expect(await call(t, 'fetch_url', { nope: 1 })).toMatchObject({
      status: 'refused',
      error: { code: 'InvalidArguments' },
    });
    expect(seen).toHaveLength(1);
  });

  it("a ToolDefinition with a built-in's name is the test's own tool, as any other", async () => {
    const own: ToolDefinition<{ q: string }> = {
      name: 'web_search',
      description: 'A stand-in search.',
      args: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      readOnly: true,
      capability: 'fetch_web',
      source: 'native',
      run: async ({ q }) => ({ results: [`about ${q}`] }),
    };
    const t = await start({ tools: [own] });
    expect(await call(t, 'web_search', { q: 'otters' })).toMatchObject({
      status: 'ok',
      value: { results: ['about otters'] },
    });
  });

  it('live runs the real tool: fetch_url reaches a real server, webhook delivers for real', async () => {
    const real = await receiver();
    const t = await start({
      tools: ['fetch_url', 'webhook'],
      live: ['fetch_url', 'webhook'],
      config: { tool_config: { fetch_url: { allow_loopback: true }, webhook: { allow_loopback: true } } },
    });
    expect(await call(t, 'fetch_url', { url: `${real.url}/page` })).toMatchObject({
      status: 'ok',
      value: { status_code: 200, body: 'real receiver' },
    });
    expect(await call(t, 'webhook', { url: `${real.url}/hook`, payload: {} })).toMatchObject({
      value: { status_code: 200, response: 'real receiver' },
    });
    expect(real.hits).toEqual(['GET /page', 'POST /hook']);
    expect(t.webhooks).toHaveLength(0);
  });

  it("the file tools and a live run_command work in the test's workspace (real sandbox), kept off the organism's files", async () => {
    const t = await start({ tools: ['write_file', 'read_file', 'run_command'], live: ['run_command'] });
    expect(await call(t, 'write_file', { path: 'note.txt', content: 'hello' })).toMatchObject({
      status: 'ok',
    });
    expect(await call(t, 'run_command', { command: 'cat note.txt' })).toMatchObject({
      status: 'ok',
      value: { exit_code: 0, stdout: 'hello' },
    });
    expect(await call(t, 'read_file', { path: '../organism.yaml' })).toMatchObject({
      status: 'refused',
      error: { code: 'GuardDenied', rule_id: 'file.daemon_data' },
    });
    expect(t.config.organism.workspace.startsWith(dirname(t.config.file))).toBe(true);
  });

  it('live send_email sends through the smtp section given, to a real SMTP server, and records nothing', async () => {
    const got: string[] = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, done) {
        got.push(...(session.envelope.rcptTo || []).map((r) => r.address));
        stream.resume().on('end', () => done());
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    // Closed here, before the server: its SMTP connection would keep the server's close waiting.
    const t = await testListener(caller, {
      name: 'support',
      tools: ['send_email'],
      live: ['send_email'],
      config: { tool_config: { send_email: { allowed_recipients: ['*@example.com'] } } },
      organism: { smtp: { host: '127.0.0.1', port, secure: false, from: 'organism@example.com' } },
    });
    try {
      expect(await call(t, 'send_email', { to: 'ada@example.com', subject: 'Hi', body: 'x' })).toMatchObject({
        status: 'ok',
        value: { accepted: ['ada@example.com'] },
      });
      expect(got).toEqual(['ada@example.com']);
      expect(t.emails).toHaveLength(0);
    } finally {
      await t.close();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    }
  });

  it('refuses an unknown name with did-you-mean, a tool given twice, and live for a tool not named', async () => {
    await expect(testListener(caller, { tools: ['key_value_gte' as never] })).rejects.toMatchObject({
      code: 'testing.unknown_tool',
      message: expect.stringContaining('(did you mean key_value_get?)'),
    });
    await expect(testListener(caller, { tools: ['webhook', undefined as never] })).rejects.toMatchObject({
      code: 'testing.invalid_option',
      message: expect.stringContaining(
        "tools[1]: undefined is neither a built-in tool's name nor a ToolDefinition",
      ),
    });
    const fake: ToolDefinition = { ...({} as ToolDefinition), name: 'webhook', run: async () => null };
    await expect(testListener(caller, { tools: ['webhook', fake] })).rejects.toMatchObject({
      code: 'testing.duplicate_tool',
    });
    await expect(testListener(caller, { tools: ['webhook'], live: ['send_email'] })).rejects.toMatchObject({
      code: 'testing.unknown_tool',
      message: expect.stringContaining('live: "send_email" is not one of the built-in tools this test names'),
    });
  });

  it('keeps the stores in a temp folder of its own, removed by close()', async () => {
    const t = await testListener(caller, { tools: ['key_value_set'] });
    await t.kv.set('k', 1);
    const folder = dirname(t.config.file);
    expect(t.config.organism.data_dir.startsWith(folder)).toBe(true);
    expect(existsSync(folder)).toBe(true);
    await t.close();
    expect(existsSync(folder)).toBe(false);
  });
});
