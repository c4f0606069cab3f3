/**
 * An OAuth-protected MCP server on 127.0.0.1 for the client's tests: the protected resource (the
 * SDK's McpServer on its Streamable HTTP transport behind a bearer check) and its authorization
 * server on one origin, as small as RFC 9728 / RFC 8414 / RFC 7591 / OAuth 2.1 allow:
 * protected-resource and authorization-server metadata, dynamic registration, an authorization
 * endpoint that approves at once (a person who clicks "allow"), PKCE, client_secret_basic,
 * client_secret_post and private_key_jwt (RS256), client credentials, refresh tokens, scopes with
 * step-up (403 insufficient_scope). Every request is recorded for the tests to read.
 */
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface TokenRequest {
  grant: string;
  auth: 'basic' | 'post' | 'jwt' | 'none';
  client_id: string;
  scope: string | undefined;
  resource: string | undefined;
}

export interface OAuthFixtureOptions {
  /** Pre-registered clients: id -> secret (or a PEM public key for private_key_jwt). */
  clients?: Record<string, { secret?: string; publicKey?: string }>;
  /** Lifetime of access tokens, in seconds. */
  ttl?: number;
  /** Scope a tool needs beyond the one listing needs (`mcp:read`). */
  toolScopes?: Record<string, string>;
  /** Port to listen on (0: any). */
  port?: number;
}

export interface OAuthFixture {
  url: string;
  origin: string;
  tokenRequests: TokenRequest[];
  registrations: number;
  authorizations: Array<{ scope: string | null; resource: string | null }>;
  /** Bearer tokens the MCP endpoint saw. */
  bearers: string[];
  issued: Array<{ access: string; refresh?: string }>;
  close(): Promise<void>;
}

type Token = { client: string; scope: string; expires: number };

export async function oauthFixture(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const clients = new Map(Object.entries(options.clients ?? {}));
  const access = new Map<string, Token>();
  const refresh = new Map<string, { client: string; scope: string }>();
  const codes = new Map<string, { client: string; challenge: string; scope: string; redirect: string }>();
  const ttl = options.ttl ?? 3600;
  const toolScopes = options.toolScopes ?? {};
  let origin = '';
  const fixture: OAuthFixture = {
    url: '',
    origin: '',
    tokenRequests: [],
    registrations: 0,
    authorizations: [],
    bearers: [],
    issued: [],
    close: async () => {},
  };

  const issue = (client: string, scope: string) => {
    const token = `at-${randomBytes(16).toString('hex')}`;
    const renew = `rt-${randomBytes(16).toString('hex')}`;
    access.set(token, { client, scope, expires: Date.now() + ttl * 1000 });
    refresh.set(renew, { client, scope });
    fixture.issued.push({ access: token, refresh: renew });
    return { access_token: token, token_type: 'Bearer', expires_in: ttl, scope, refresh_token: renew };
  };

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

  const token = async (req: IncomingMessage, res: ServerResponse) => {
    const form = new URLSearchParams(await text(req));
    let clientId = form.get('client_id') ?? '';
    let auth: TokenRequest['auth'] = 'none';
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    if (basic) {
      const [id = '', secret = ''] = Buffer.from(basic[1] as string, 'base64')
        .toString()
        .split(':')
        .map(decodeURIComponent);
      if (clients.get(id)?.secret !== secret) return json(res, 401, { error: 'invalid_client' });
      clientId = id;
      auth = 'basic';
    } else if (form.get('client_assertion')) {
      const [head = '', body = '', sig = ''] = (form.get('client_assertion') as string).split('.');
      const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
      const key = clients.get(claims.sub)?.publicKey;
      const ok =
        key !== undefined &&
        verify(
          'sha256',
          Buffer.from(`${head}.${body}`),
          createPublicKey(key),
          Buffer.from(sig, 'base64url'),
        ) &&
        claims.iss === claims.sub &&
        claims.exp * 1000 > Date.now();
      if (!ok) return json(res, 401, { error: 'invalid_client' });
      clientId = claims.sub;
      auth = 'jwt';
    } else if (form.get('client_secret') !== null) {
      if (clients.get(clientId)?.secret !== form.get('client_secret'))
        return json(res, 401, { error: 'invalid_client' });
      auth = 'post';
    }
    const grant = form.get('grant_type') ?? '';
    fixture.tokenRequests.push({
      grant,
      auth,
      client_id: clientId,
      scope: form.get('scope') ?? undefined,
      resource: form.get('resource') ?? undefined,
    });
    if (form.get('resource') !== fixture.url) return json(res, 400, { error: 'invalid_target' });
    if (grant === 'client_credentials') {
      if (auth === 'none') return json(res, 401, { error: 'invalid_client' });
      return json(res, 200, issue(clientId, form.get('scope') ?? 'mcp:read'));
    }
    if (grant === 'authorization_code') {
      const code = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!code || code.challenge !== challenge || code.redirect !== form.get('redirect_uri'))
        return json(res, 400, { error: 'invalid_grant' });
      return json(res, 200, issue(code.client, code.scope));
    }
    if (grant === 'refresh_token') {
      const held = refresh.get(form.get('refresh_token') ?? '');
      if (!held) return json(res, 400, { error: 'invalid_grant' });
      refresh.delete(form.get('refresh_token') ?? '');
      return json(res, 200, issue(held.client, held.scope));
    }
    return json(res, 400, { error: 'unsupported_grant_type' });
  };

  const mcp = async (req: IncomingMessage, res: ServerResponse) => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer) fixture.bearers.push(bearer);
    const held = bearer ? access.get(bearer) : undefined;
    const challenge = (extra = '') =>
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"${extra}`;
    if (!held || held.expires < Date.now()) {
      res.writeHead(401, { 'www-authenticate': challenge(', scope="mcp:read"') }).end();
      return;
    }
    const body = req.method === 'POST' ? await text(req) : '';
    const parsed = body ? JSON.parse(body) : undefined;
    const tool = parsed?.method === 'tools/call' ? (parsed.params?.name as string) : undefined;
    const needed = tool ? toolScopes[tool] : undefined;
    if (needed && !held.scope.split(' ').includes(needed)) {
      res
        .writeHead(403, {
          'www-authenticate': challenge(`, error="insufficient_scope", scope="mcp:read ${needed}"`),
        })
        .end();
      return;
    }
    const server = new McpServer({ name: 'guarded', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { description: 'Says which client called.', inputSchema: {} },
      async () => ({
        content: [{ type: 'text', text: `client ${held.client} with ${held.scope}` }],
      }),
    );
    server.registerTool('admin', { description: 'Needs more scope.', inputSchema: {} }, async () => ({
      content: [{ type: 'text', text: 'admin done' }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
  };

  const http = createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const route = `${req.method} ${url.pathname}`;
    const done = (p: Promise<unknown> | unknown) =>
      Promise.resolve(p).catch((error: unknown) => {
        if (!res.headersSent) json(res, 500, { error: 'server_error', error_description: String(error) });
      });
    if (route === 'GET /.well-known/oauth-protected-resource/mcp')
      return json(res, 200, {
        resource: fixture.url,
        authorization_servers: [origin],
        scopes_supported: ['mcp:read'],
      });
    if (route === 'GET /.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: [
          'client_secret_basic',
          'client_secret_post',
          'private_key_jwt',
          'none',
        ],
      });
    if (route === 'POST /register')
      return done(
        text(req).then((body) => {
          fixture.registrations++;
          const meta = JSON.parse(body);
          const id = `dyn-${randomBytes(6).toString('hex')}`;
          clients.set(id, {});
          json(res, 201, { ...meta, client_id: id, token_endpoint_auth_method: 'none' });
        }),
      );
    if (route === 'GET /authorize') {
      const p = url.searchParams;
      fixture.authorizations.push({ scope: p.get('scope'), resource: p.get('resource') });
      const code = randomBytes(12).toString('hex');
      codes.set(code, {
        client: p.get('client_id') ?? '',
        challenge: p.get('code_challenge') ?? '',
        scope: p.get('scope') ?? 'mcp:read',
        redirect: p.get('redirect_uri') ?? '',
      });
      const back = new URL(p.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      if (p.get('state') !== null) back.searchParams.set('state', p.get('state') as string);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (route === 'POST /token') return done(token(req, res));
    if (url.pathname === '/mcp') return done(mcp(req, res));
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  fixture.origin = origin;
  fixture.url = `${origin}/mcp`;
  fixture.close = () =>
    new Promise((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
  return fixture;
}

function text(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
