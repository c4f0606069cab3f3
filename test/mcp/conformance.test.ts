/**
 * The official MCP conformance suite, both ways (issue 27):
 * - `conformance server`: every active server scenario against the real daemon's /mcp, serving
 *   examples/conformance/organism.yaml (its fixtures are written with the public features only);
 * - `conformance client`: the client scenarios of the 2025-11-25 spec against
 *   examples/conformance/client.mjs, which drives the daemon's own MCP client code.
 * Every check of every scenario must pass (a scenario listed in examples/conformance/
 * expected-failures.yaml may fail: each entry says which spec clause and why). The suite needs
 * Node 22+: see conformanceNode().
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';
import {
  bearerRelay,
  CONFORMANCE_DIR,
  conformanceNode,
  conformanceOrganismCopy,
  describeFailures,
  runSuite,
} from './conformance-harness.ts';

/** The client scenarios of the 2025-11-25 spec (the list), run one by one. */
const CLIENT_SCENARIOS = [
  'initialize',
  'tools_call',
  'elicitation-sep1034-client-defaults',
  'sse-retry',
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
];

const EXPECTED_FAILURES = join(CONFORMANCE_DIR, 'expected-failures.yaml');
const expectedFailures = existsSync(EXPECTED_FAILURES) ? ['--expected-failures', EXPECTED_FAILURES] : [];

describe('MCP conformance: the daemon as a server', () => {
  let daemon: DaemonProcess;
  let relay: Awaited<ReturnType<typeof bearerRelay>>;

  beforeAll(async () => {
    conformanceNode();
    const { file } = conformanceOrganismCopy();
    daemon = await startDaemonProcess(['--config', file]);
    relay = await bearerRelay(daemon.url, daemon.token ?? '');
  }, 30_000);

  afterAll(async () => {
    await relay?.close();
    await daemon?.stop();
  });

  it('passes every active server scenario', async () => {
    const run = await runSuite(['server', '--url', `${relay.url}/mcp`, ...expectedFailures]);
    const passed = run.results.filter((r) => r.failed.length === 0 && r.checks.length > 0);
    console.log(`MCP conformance, server: ${passed.length} of ${run.results.length} scenarios pass`);
    expect(run.results.length, run.output).toBeGreaterThanOrEqual(30);
    expect(describeFailures(run.results), run.output.slice(-4000)).toBe('');
    expect(run.code, run.output.slice(-4000)).toBe(0);
  }, 600_000);
});

describe('MCP conformance: the daemon as a client', () => {
  it('passes every client scenario of the 2025-11-25 spec', async () => {
    const command = `node ${join(CONFORMANCE_DIR, 'client.mjs')}`;
    const runs = [];
    for (const scenario of CLIENT_SCENARIOS) {
      runs.push(
        await runSuite(['client', '--command', command, '--scenario', scenario, ...expectedFailures]),
      );
    }
    const results = runs.flatMap((r) => r.results);
    const passed = results.filter((r) => r.failed.length === 0 && r.checks.length > 0);
    console.log(`MCP conformance, client: ${passed.length} of ${CLIENT_SCENARIOS.length} scenarios pass`);
    const output = runs.map((r) => r.output).join('\n');
    expect(results.map((r) => r.scenario).sort(), output.slice(-4000)).toEqual([...CLIENT_SCENARIOS].sort());
    expect(describeFailures(results), output.slice(-4000)).toBe('');
    expect(runs.map((r) => r.code)).toEqual(CLIENT_SCENARIOS.map(() => 0));
  }, 900_000);
});
