/**
 * Issue 27 (the MCP client's OAuth) under issue 25's trust boundary, with the real daemon: the
 * OAuth tokens the daemon holds for a remote MCP server are a credential no tool may read. They
 * live in the runtime state, sealed and encrypted under a key derived from the audit key.
 *
 * - Redis (kv.url): a sandboxed program granted `network: true` reaches Redis and reads every key
 *   of the organism's state space; it finds the token record, and only ciphertext in it.
 * - Embedded: the state is `<data_dir>/state`, which the sandbox does not show.
 *
 * Either way neither the access token, the refresh token nor the client secret appears in what the
 * program printed, in the daemon's log, or in the audit log.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, TOOLBOX } from '../approval/helpers.ts';
import { dropGroup, SHARED_REDIS } from '../e2e/redis-support/harness.ts';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { type OAuthFixture, oauthFixture } from '../mcp/oauth-support/server.ts';
import { ADMIN_TOKEN, AUTH_YAML, call, organismDir, startOn, TOKENS_ENV, until } from '../server/helpers.ts';

const SECRET = `svc-secret-${randomBytes(8).toString('hex')}`;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function organism(
  redis: boolean,
): Promise<{ dir: string; daemon: DaemonProcess; fixture: OAuthFixture; group: string }> {
  const fixture = await oauthFixture({ clients: { svc: { secret: SECRET } } });
  cleanups.push(() => fixture.close());
  const group = `oauth-${randomUUID().slice(0, 8)}`;
  if (redis) cleanups.push(() => dropGroup(SHARED_REDIS, group));
  const { dir, file } = await organismDir('');
  await writeFile(
    file,
    `organism:
  name: ${group}
  data_dir: ${dir}/data
  workspace: ${dir}/ws
${redis ? `kv:\n  url: ${SHARED_REDIS}\n` : ''}${AUTH_YAML}mcp_servers:
  - name: guarded
    url: ${fixture.url}
    capabilities: { whoami: read }
    auth:
      grant: client_credentials
      client_id: svc
      client_secret_env: SVC_SECRET
listeners:
  - name: intruder
    handler: ${TOOLBOX}
    payload: use-tool-intruder
    trust: high
    tools: [run_command, guarded.whoami]
    tool_config:
      run_command: { shell: true, network: true }
`,
  );
  const daemon = await startOn(file, { ...TOKENS_ENV, SVC_SECRET: SECRET });
  cleanups.push(() => daemon.stop('SIGKILL'));
  await until(() => (fixture.issued.length > 0 ? true : undefined));
  return { dir, daemon, fixture, group };
}

const xmlText = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

async function run(url: string, tool: string, args: unknown): Promise<{ status: string; result: any }> {
  const payload = `<use-tool-intruder><tool>${tool}</tool><args>${xmlText(JSON.stringify(args))}</args></use-tool-intruder>`;
  const res = await call(url, '/api/v1/inject', { token: ADMIN_TOKEN, body: { payload } });
  expect(res.status).toBe(202);
  return answer(url, res.json.thread as string, ADMIN_TOKEN);
}

function expectNoCredential(text: string, fixture: OAuthFixture): void {
  for (const { access, refresh } of fixture.issued) {
    expect(text).not.toContain(access);
    if (refresh) expect(text).not.toContain(refresh);
  }
  expect(text).not.toContain(SECRET);
}

describe('the MCP client OAuth tokens, out of every tool reach', () => {
  it('Redis: a program with network: true reads the token record, and finds only ciphertext', async () => {
    const { dir, daemon, fixture } = await organism(true);
    // The tokens work (the server is called with them)...
    const used = await run(daemon.url, 'guarded.whoami', {});
    expect(JSON.stringify(used.result)).toContain('client svc');
    // ...and a program dumps every key and value of the organism's state space.
    const script = `for k in $(redis-cli -h 127.0.0.1 --scan --pattern '*mcp-oauth*'); do echo "KEY $k"; redis-cli -h 127.0.0.1 --no-raw GET "$k"; done`;
    const got = await run(daemon.url, 'run_command', { command: script });
    expect(got.status).toBe('ok');
    const printed = JSON.stringify(got.result);
    expect(printed).toMatch(/KEY organism:\{[^}]+\}:state:mcp-oauth/);
    // The record as stored: sealed and encrypted (x: 1), its body ciphertext.
    expect(got.result.stdout).toContain('\\"x\\":1');
    expectNoCredential(printed, fixture);
    expectNoCredential(daemon.stdout(), fixture);
    expectNoCredential(await readFile(join(dir, 'data', 'audit.jsonl'), 'utf8'), fixture);
  }, 120_000);

  it('embedded: the state folder is not visible to a sandboxed program', async () => {
    const { dir, daemon, fixture } = await organism(false);
    const state = join(dir, 'data', 'state');
    // It is there, holding the sealed record (checked from outside the sandbox).
    expect(await readFile(join(state, 'kv.log'), 'utf8')).toContain('mcp-oauth');
    const got = await run(daemon.url, 'run_command', {
      command: `cat ${state}/kv.log; ls -la ${dir}/data; timeout 20 grep -rl mcp-oauth /tmp /home /root /var /run 2>/dev/null | head -5; echo done`,
    });
    const printed = JSON.stringify(got.result);
    expect(printed).toContain('done');
    expect(printed).not.toContain('mcp-oauth');
    expectNoCredential(printed, fixture);
    expectNoCredential(daemon.stdout(), fixture);
    expectNoCredential(await readFile(join(dir, 'data', 'audit.jsonl'), 'utf8'), fixture);
  }, 120_000);
});
