/**
 * The conformance suite's client entry: `<command> <server-url>`, with the scenario in
 * MCP_CONFORMANCE_SCENARIO and, for some, its context (pre-registered credentials, a key) in
 * MCP_CONFORMANCE_CONTEXT. It drives the daemon's own MCP client: the `mcp_servers` entry the
 * scenario calls for, resolved by src/mcp/config.ts and connected by McpConnection (the same
 * transport, OAuth, elicitation policy and reconnection the daemon uses), never a second client.
 *
 * Run it: node --import tsx examples/conformance/client.ts <server-url>
 *
 * The one stand-in: the authorization-code flow's person. The suite's authorization server
 * approves at once and redirects, so the user agent here follows the authorization URL and reads
 * the code from the redirect (checking `state`), where `organism mcp login` would have a person's
 * browser come back to its loopback port.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OrganismConfig } from '../../src/config/types.ts';
import { McpConnection } from '../../src/mcp/client/connection.ts';
import type { UserAgent } from '../../src/mcp/client/oauth/provider.ts';
import { type McpServerConfig, resolveServerConfig } from '../../src/mcp/config.ts';

/** What the suite's servers expect of a client that supports URL client ids (SEP-991). */
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';

type Context = {
  name?: string;
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
};

/** The stand-in for a person's browser: follows the authorization URL, returns the code it redirects with. */
const followingAgent: UserAgent = {
  async authorize(url, expect) {
    const response = await fetch(url, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (!location) throw new Error(`the authorization endpoint answered ${response.status}, not a redirect`);
    const back = new URL(location, url);
    const state = back.searchParams.get('state');
    if (state !== null && state !== expect.state)
      throw new Error('the redirect came back with another state');
    const code = back.searchParams.get('code');
    if (!code)
      throw new Error(`the redirect carries no code: ${back.searchParams.get('error') ?? 'no error'}`);
    return code;
  },
};

/** The `mcp_servers` entry for the scenario, as a user would write it in organism.yaml. */
function serverFor(
  scenario: string,
  url: string,
  context: Context,
  scratch: string,
  env: NodeJS.ProcessEnv,
): McpServerConfig {
  const server: McpServerConfig = { name: 'conformance', url, start: 'daemon' };
  if (!scenario.startsWith('auth/')) return server;
  if (scenario === 'auth/client-credentials-basic') {
    env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
    return {
      ...server,
      auth: {
        grant: 'client_credentials',
        client_id: context.client_id,
        client_secret_env: 'CONFORMANCE_CLIENT_SECRET',
        client_auth: 'client_secret_basic',
      },
    };
  }
  if (scenario === 'auth/client-credentials-jwt') {
    const keyFile = join(scratch, 'client-key.pem');
    writeFileSync(keyFile, context.private_key_pem ?? '', { mode: 0o600 });
    return {
      ...server,
      auth: {
        grant: 'client_credentials',
        client_id: context.client_id,
        client_auth: 'private_key_jwt',
        private_key_file: keyFile,
        jwt_algorithm: context.signing_algorithm ?? 'ES256',
      },
    };
  }
  if (scenario === 'auth/pre-registration') {
    env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
    return {
      ...server,
      auth: { client_id: context.client_id, client_secret_env: 'CONFORMANCE_CLIENT_SECRET' },
    };
  }
  return { ...server, auth: { client_metadata_url: CIMD_URL } };
}

/** The tool each scenario calls after listing (none: listing is the scenario). */
function toolFor(scenario: string): { name: string; args: Record<string, unknown> } | undefined {
  if (scenario === 'tools_call') return { name: 'add_numbers', args: { a: 2, b: 3 } };
  if (scenario === 'elicitation-sep1034-client-defaults')
    return { name: 'test_client_elicitation_defaults', args: {} };
  if (scenario === 'sse-retry') return { name: 'test_reconnection', args: {} };
  if (scenario.startsWith('auth/client-credentials') || scenario === 'auth/pre-registration')
    return undefined;
  if (scenario.startsWith('auth/')) return { name: 'test-tool', args: {} };
  return undefined;
}

async function main(): Promise<number> {
  const url = process.argv[2];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize';
  if (!url) {
    process.stderr.write('usage: client.ts <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)\n');
    return 2;
  }
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Context;
  const scratch = mkdtempSync(join(tmpdir(), 'organism-conformance-'));
  const env = { ...process.env };
  // Only what an HTTP server's transport reads of the organism's config: the file (relative paths).
  const config = { file: join(scratch, 'organism.yaml') } as OrganismConfig;
  const server = resolveServerConfig(serverFor(scenario, url, context, scratch, env));
  const connection = new McpConnection(
    { ...server, restart_initial_ms: 3_600_000 },
    { config, env, userAgent: () => followingAgent },
  );
  try {
    await connection.start();
    const tool = toolFor(scenario);
    if (tool) {
      const result = await connection.call(tool.name, tool.args, server.timeout_ms);
      process.stdout.write(`${JSON.stringify(result)}\n`);
    }
    return 0;
  } catch (error) {
    process.stderr.write(`${scenario}: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await connection.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

process.exitCode = await main();
