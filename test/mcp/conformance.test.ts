/**
 * The official MCP conformance suite, both ways (issue 27):
 * - `conformance server --suite all`: every server scenario against the real daemon's /mcp,
 *   serving examples/conformance/organism.yaml (its fixtures use the public features only);
 * - `conformance client`: the client scenarios of the 2025-11-25 spec against
 *   examples/conformance/client.mjs, which drives the daemon's own MCP client code.
 * Every check of every scenario must pass, but for those examples/conformance/expected-failures.yaml
 * lists (each with its spec clause and why); an entry that passes fails the test too. The suite
 * needs Node 22+: see conformanceNode().
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';
import {
  bearerRelay,
  CONFORMANCE_DIR,
  conformanceNode,
  conformanceOrganismCopy,
  expectedFailures,
  judge,
  runSuite,
} from './conformance-harness.ts';

/** The client scenarios of the 2025-11-25 spec the issue names, and the client-credentials extension. */
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

/** What the suite printed last: enough to see why, not the whole run. */
const tail = (text: string) => text.slice(-6000);

describe('MCP conformance: the daemon as a server', () => {
  let daemon: DaemonProcess;
  let relay: Awaited<ReturnType<typeof bearerRelay>>;
  let copy: string | undefined;

  beforeAll(async () => {
    conformanceNode();
    const { file, dir } = conformanceOrganismCopy();
    copy = dir;
    daemon = await startDaemonProcess(['--config', file]);
    relay = await bearerRelay(daemon.url, daemon.token ?? '');
  }, 30_000);

  afterAll(async () => {
    await relay?.close();
    await daemon?.stop();
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('passes every server scenario (active and pending)', async () => {
    const run = await runSuite(['server', '--url', `${relay.url}/mcp`, '--suite', 'all']);
    const verdict = judge(run.results, expectedFailures('server'));
    console.log(`MCP conformance, server: ${verdict.passed.length} of ${run.results.length} scenarios pass`);
    // 0.1.16 has 30 active and 2 pending server scenarios; fewer means some did not run.
    expect(run.results.length, tail(run.output)).toBeGreaterThanOrEqual(32);
    expect(verdict.unexpected, tail(run.output)).toEqual([]);
    expect(verdict.stale, 'expected-failures.yaml entries that now pass').toEqual([]);
    expect(run.code, tail(run.output)).toBe(0);
  }, 600_000);
});

describe('MCP conformance: the daemon as a client', () => {
  it('passes every client scenario of the 2025-11-25 spec', async () => {
    const command = `node ${join(CONFORMANCE_DIR, 'client.mjs')}`;
    // Four at a time (each scenario's servers take their own ports): one by one takes minutes.
    const runs = await inPool(CLIENT_SCENARIOS, 4, (scenario) =>
      runSuite(['client', '--command', command, '--scenario', scenario], {}, 120_000),
    );
    const results = runs.flatMap((r) => r.results);
    const verdict = judge(results, expectedFailures('client'));
    console.log(
      `MCP conformance, client: ${verdict.passed.length} of ${CLIENT_SCENARIOS.length} scenarios pass`,
    );
    const output = tail(runs.map((r) => r.output).join('\n'));
    expect(results.map((r) => r.scenario).sort(), output).toEqual([...CLIENT_SCENARIOS].sort());
    expect(verdict.unexpected, output).toEqual([]);
    expect(verdict.stale, 'expected-failures.yaml entries that now pass').toEqual([]);
    expect(
      runs.map((r) => r.code),
      output,
    ).toEqual(CLIENT_SCENARIOS.map(() => 0));
  }, 900_000);
});

/** `work` for every item, at most `size` at once; results in the items' order. */
async function inPool<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return results;
}
