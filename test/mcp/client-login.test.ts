/**
 * `organism mcp login <server>` for the authorization-code flow: it prints the authorization URL, a
 * browser (here: fetch, following the authorization server's redirect as a browser would) comes
 * back to its loopback port, and the tokens land in the runtime state; the daemon's tool runtime
 * then calls with them without a new sign-in, and refreshes them with the refresh token once they
 * expire.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { ToolRuntime } from '../../src/tools/runtime.ts';
import { call, startRuntime, type TempOrganism, tempOrganism, until } from './helpers.ts';
import { type OAuthFixture, oauthFixture } from './oauth-support/server.ts';

let runtime: ToolRuntime | undefined;
let fixture: OAuthFixture | undefined;
afterEach(async () => {
  await runtime?.close();
  await fixture?.close();
  runtime = undefined;
  fixture = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function organism(url: string, auth: string): Promise<TempOrganism> {
  return tempOrganism(`mcp_servers:
  - name: guarded
    url: ${url}
    start: lazy
    capabilities: { whoami: read }
    auth: ${auth}
listeners:
  - name: worker
    agent: true
    description: works
    tools: [guarded.whoami]
`);
}

function login(o: TempOrganism, server = 'guarded') {
  const io = captureIo();
  const done = main(['mcp', 'login', server, '-c', o.config, '--timeout', '30'], io);
  return { io, done };
}

async function printedUrl(io: { stdout: string[] }): Promise<string> {
  let url = '';
  await until(() => {
    url = /https?:\/\/\S+\/authorize\?\S+/.exec(io.stdout.join('\n'))?.[0] ?? '';
    return url !== '';
  }, 'the authorization URL');
  return url;
}

describe('organism mcp login', () => {
  it('signs in once; the runtime then calls with the stored tokens and refreshes them', async () => {
    fixture = await oauthFixture({ ttl: 3 });
    const port = await freePort();
    const o = await organism(fixture.url, `{ scope: "mcp:read", redirect_port: ${port} }`);
    const { io, done } = login(o);
    const url = await printedUrl(io);
    // The person's browser: the authorization server redirects to the loopback port.
    const page = await fetch(url);
    expect(await page.text()).toContain('Signed in to guarded');
    expect(await done).toBe(0);
    expect(io.stdout.join('\n')).toContain('Signed in to guarded: 2 tools listed');
    expect(fixture.registrations).toBe(1);
    expect(fixture.authorizations).toEqual([{ scope: 'mcp:read', resource: fixture.url }]);
    const first = fixture.issued[0]?.access as string;
    expect(io.stdout.join('\n') + io.stderr.join('\n')).not.toContain(first);

    runtime = await startRuntime(o);
    expect(JSON.stringify(await call(runtime, 'worker', 'guarded.whoami'))).toContain('with mcp:read');
    expect(fixture.authorizations).toHaveLength(1);
    expect(fixture.bearers.at(-1)).toBe(first);

    await new Promise((r) => setTimeout(r, 3_000));
    expect(await call(runtime, 'worker', 'guarded.whoami')).toMatchObject({ status: 'ok' });
    expect(fixture.tokenRequests.map((r) => r.grant)).toEqual(['authorization_code', 'refresh_token']);
    expect(fixture.authorizations).toHaveLength(1);
    expect(fixture.bearers.at(-1)).toBe(fixture.issued[1]?.access);
  }, 60_000);

  it('refuses a redirect that does not carry the state it sent', async () => {
    fixture = await oauthFixture();
    const port = await freePort();
    const o = await organism(fixture.url, `{ redirect_port: ${port} }`);
    const { io, done } = login(o);
    await printedUrl(io);
    const page = await fetch(`http://127.0.0.1:${port}/callback?code=stolen&state=forged`);
    expect(page.status).toBe(400);
    expect(await done).toBe(1);
    expect(io.stderr.join('\n')).toContain('does not carry the state this login sent');
    expect(fixture.tokenRequests).toEqual([]);
  }, 60_000);

  it('says why there is nothing to sign in to', async () => {
    fixture = await oauthFixture();
    const o = await organism(
      fixture.url,
      '{ grant: client_credentials, client_id: svc, client_secret_env: X_SECRET }',
    );
    const cc = login(o);
    expect(await cc.done).toBe(1);
    expect(cc.io.stderr.join('\n')).toContain('uses grant: client_credentials: the organism signs itself in');
    const unknown = login(o, 'nope');
    expect(await unknown.done).toBe(1);
    expect(unknown.io.stderr.join('\n')).toContain("no MCP server named 'nope' in mcp_servers (guarded)");
  });
});
