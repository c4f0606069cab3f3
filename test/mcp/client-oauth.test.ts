/**
 * The MCP client against an OAuth-protected server (test/mcp/oauth-support: resource and
 * authorization server on 127.0.0.1), through the tool runtime the daemon builds: discovery from the
 * 401's resource metadata, client credentials with client_secret_basic, client_secret_post and
 * private_key_jwt, the resource indicator, step-up on 403 insufficient_scope, renewal of expired
 * tokens, a bounded number of attempts against a server that keeps refusing, and the tokens kept
 * in the runtime state encrypted.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { ToolRuntime } from '../../src/tools/runtime.ts';
import { call, startRuntime, type TempOrganism, tempOrganism } from './helpers.ts';
import { type OAuthFixture, oauthFixture } from './oauth-support/server.ts';

const SECRET = 'svc-secret-0123456789abcdef';

let runtime: ToolRuntime | undefined;
let fixture: OAuthFixture | undefined;
afterEach(async () => {
  await runtime?.close();
  await fixture?.close();
  runtime = undefined;
  fixture = undefined;
});

function organism(url: string, auth: string, tools = '[guarded.whoami]'): Promise<TempOrganism> {
  return tempOrganism(`mcp_servers:
  - name: guarded
    url: ${url}
    restart_initial_ms: 100
    capabilities: { whoami: read, admin: read }
    auth:
${auth
  .trim()
  .split('\n')
  .map((line) => `      ${line}`)
  .join('\n')}
listeners:
  - name: worker
    agent: true
    description: works
    tools: ${tools}
`);
}

const text = (result: unknown) => JSON.stringify(result);

describe('MCP client with OAuth client credentials', () => {
  it('client_secret_basic: discovers the authorization server, sends the resource indicator, calls with the token', async () => {
    fixture = await oauthFixture({ clients: { svc: { secret: SECRET } } });
    const o = await organism(
      fixture.url,
      `grant: client_credentials
client_id: svc
client_secret_env: SVC_SECRET
client_auth: client_secret_basic`,
    );
    const warnings: string[] = [];
    runtime = await startRuntime(o, { SVC_SECRET: SECRET }, warnings);
    const result = await call(runtime, 'worker', 'guarded.whoami');
    expect(result).toMatchObject({ status: 'ok' });
    expect(text(result)).toContain('client svc with mcp:read');
    expect(fixture.tokenRequests).toEqual([
      {
        grant: 'client_credentials',
        auth: 'basic',
        client_id: 'svc',
        scope: 'mcp:read',
        resource: fixture.url,
      },
    ]);
    const token = fixture.issued[0]?.access as string;
    expect(fixture.bearers.length).toBeGreaterThan(1);
    expect(new Set(fixture.bearers)).toEqual(new Set([token]));
    // Kept in the runtime state, sealed and encrypted: neither the token nor the secret in clear.
    const stored = await readFile(join(o.dataDir, 'state', 'kv.log'), 'utf8');
    expect(stored).toContain('mcp-oauth');
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(SECRET);
    expect(text(warnings)).not.toContain(token);
  });

  it('client_secret_post and private_key_jwt authenticate as configured', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    fixture = await oauthFixture({
      clients: {
        svc: { secret: SECRET },
        signer: { publicKey: publicKey.export({ type: 'spki', format: 'pem' }) as string },
      },
    });
    const post = await organism(
      fixture.url,
      `grant: client_credentials
client_id: svc
client_secret_env: SVC_SECRET
client_auth: client_secret_post`,
    );
    runtime = await startRuntime(post, { SVC_SECRET: SECRET });
    expect(await call(runtime, 'worker', 'guarded.whoami')).toMatchObject({ status: 'ok' });
    await runtime.close();
    const jwt = await organism(
      fixture.url,
      `grant: client_credentials
client_id: signer
private_key_file: ./client.pem`,
    );
    await writeFile(
      join(jwt.dir, 'client.pem'),
      privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      {
        mode: 0o600,
      },
    );
    runtime = await startRuntime(jwt, {});
    const result = await call(runtime, 'worker', 'guarded.whoami');
    expect(text(result)).toContain('client signer');
    expect(fixture.tokenRequests.map((r) => [r.client_id, r.auth])).toEqual([
      ['svc', 'post'],
      ['signer', 'jwt'],
    ]);
  });

  it('steps up on 403 insufficient_scope, keeping the scopes it held, and renews a token that expired', async () => {
    fixture = await oauthFixture({
      clients: { svc: { secret: SECRET } },
      toolScopes: { admin: 'mcp:admin' },
      ttl: 2,
    });
    const o = await organism(
      fixture.url,
      `grant: client_credentials
client_id: svc
client_secret_env: SVC_SECRET`,
      '[guarded.whoami, guarded.admin]',
    );
    runtime = await startRuntime(o, { SVC_SECRET: SECRET });
    const admin = await call(runtime, 'worker', 'guarded.admin');
    expect(admin).toMatchObject({ status: 'ok' });
    expect(text(admin)).toContain('admin done');
    expect(fixture.tokenRequests.map((r) => r.scope)).toEqual(['mcp:read', 'mcp:read mcp:admin']);
    const stepped = fixture.issued.at(-1)?.access as string;
    // Past its life (2 s, taken as 1.8 s): a new token is fetched before the request, not after a 401.
    await new Promise((r) => setTimeout(r, 2_100));
    const seen = fixture.bearers.length;
    expect(text(await call(runtime, 'worker', 'guarded.whoami'))).toContain('mcp:read mcp:admin');
    expect(fixture.tokenRequests).toHaveLength(3);
    expect(fixture.bearers.slice(seen)).not.toContain(stepped);
  });

  it("a refused secret: the server is unavailable with the authorization server's reason, no secret shown", async () => {
    fixture = await oauthFixture({ clients: { svc: { secret: SECRET } } });
    const o = await organism(
      fixture.url,
      `grant: client_credentials
client_id: svc
client_secret_env: SVC_SECRET`,
    );
    runtime = await startRuntime(o, { SVC_SECRET: 'wrong-secret-abcdef0123' });
    const result = await call(runtime, 'worker', 'guarded.whoami');
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    expect(text(result)).toMatch(
      /server guarded is down: could not start: authorization with http:\/\/127\.0\.0\.1:\d+ failed: invalid_client/,
    );
    expect(text(result)).not.toContain('wrong-secret-abcdef0123');
    expect(fixture.tokenRequests.length).toBe(0);
  });

  it('a pre-registered secret goes only to the configured issuer, never to the one a server names', async () => {
    fixture = await oauthFixture({ clients: { svc: { secret: SECRET } } });
    const o = await organism(
      fixture.url,
      `grant: client_credentials
client_id: svc
client_secret_env: SVC_SECRET
issuer: https://auth.example.com`,
    );
    runtime = await startRuntime(o, { SVC_SECRET: SECRET });
    const result = await call(runtime, 'worker', 'guarded.whoami');
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    expect(text(result)).toContain('https://auth.example.com');
    expect(fixture.tokenRequests).toEqual([]);
  });

  it('a client secret variable that is not set is named (never a value)', async () => {
    fixture = await oauthFixture();
    const o = await organism(
      fixture.url,
      `grant: client_credentials
client_id: svc
client_secret_env: SVC_SECRET_UNSET`,
    );
    runtime = await startRuntime(o, {});
    const result = await call(runtime, 'worker', 'guarded.whoami');
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    expect(text(result)).toContain('SVC_SECRET_UNSET');
  });

  it('authorization_code without a sign-in: the call says to run organism mcp login', async () => {
    fixture = await oauthFixture();
    const o = await organism(fixture.url, 'grant: authorization_code');
    runtime = await startRuntime(o, {});
    const result = await call(runtime, 'worker', 'guarded.whoami');
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    expect(text(result)).toContain("run 'organism mcp login guarded'");
    expect(fixture.authorizations).toEqual([]);
  });
});

describe('organism validate on mcp_servers[].auth', () => {
  async function validate(yaml: string) {
    const o = await tempOrganism(yaml);
    const io = captureIo();
    const code = await main(['validate', o.config], io);
    return { code, err: io.stderr.join('\n') };
  }

  it('names each combination that cannot work, and where', async () => {
    const r = await validate(`mcp_servers:
  - name: local
    command: /bin/true
    auth: { grant: authorization_code }
  - name: both
    url: https://mcp.example.com/mcp
    token_env: X_TOKEN
    auth: {}
  - name: cc
    url: https://mcp.example.com/mcp
    auth: { grant: client_credentials }
  - name: basic
    url: https://mcp.example.com/mcp
    auth: { client_id: app, client_auth: client_secret_basic }
  - name: jwt
    url: https://mcp.example.com/mcp
    auth: { client_id: app, client_auth: private_key_jwt }
  - name: typo
    url: https://mcp.example.com/mcp
    auth: { grant: password }
`);
    expect(r.code).toBe(1);
    expect(r.err).toContain('mcp_servers[0].auth');
    expect(r.err).toContain('auth (OAuth) is for a Streamable HTTP server (url), not a stdio one');
    expect(r.err).toContain('either token_env (a fixed bearer token) or auth (OAuth), not both');
    expect(r.err).toContain('mcp_servers[2].auth.grant');
    expect(r.err).toContain('client_credentials needs the pre-registered client_id');
    expect(r.err).toContain('client_secret_basic needs client_secret_env');
    expect(r.err).toContain('private_key_jwt needs private_key_file');
    expect(r.err).toMatch(/mcp_servers\[5\]\.auth\.grant[^\n]*(authorization_code|one of)/);
  });

  it('accepts a complete configuration', async () => {
    const r = await validate(`mcp_servers:
  - name: remote
    url: https://mcp.example.com/mcp
    elicitation: decline
    auth:
      client_id: app
      client_secret_env: APP_SECRET
      client_auth: client_secret_post
      scope: mcp:read
      issuer: https://auth.example.com
listeners:
  - name: worker
    agent: true
    description: works
    tools: [remote.search]
`);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });
});
