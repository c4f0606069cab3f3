/**
 * What the default organism's daemon loads at start, and what it leaves for first use. Start-up time
 * and idle RSS grow with every module loaded (bench/daemon.ts measures both): code for another
 * configuration (the Redis transport, the eXist librarian) or for a request that may never come (the
 * XSD writer, the embedded librarian and its XML DOM, the OpenAPI document, the MCP server and its
 * SDK, the CLI's config-error reporter) is imported when it is needed. The daemon runs with an `--import` hook
 * that writes the URL of every ES module it loads to a file; the test reads the file after start,
 * then asks for a listener's XSD, opens an MCP session and runs librarian tools, and sees those
 * modules arrive.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, daemonFetch, startDaemonProcess, useTool } from '../helpers/daemon.ts';

/** Loaded at start by no daemon of the default organism: each group named, for the failure message. */
const NOT_AT_START: Record<string, RegExp> = {
  'the Redis transport': /\/dist\/src\/bus\/transport\/redis\//,
  'the embedded librarian backend': /\/dist\/librarian\/embedded\//,
  'the eXist librarian backend': /\/dist\/librarian\/exist\//,
  "librarian_query's read-only check": /\/dist\/librarian\/readonly\.js/,
  'slimdom (XML DOM)': /\/node_modules\/slimdom\//,
  'the XSD writer': /\/dist\/src\/xml\/xsd\.js/,
  "the CLI's config-error reporter": /\/dist\/src\/cli\/report\.js/,
  'the OpenAPI document': /\/dist\/src\/server\/openapi\//,
  'the MCP SDK': /\/node_modules\/@modelcontextprotocol\/sdk\//,
  'the MCP server host': /\/dist\/src\/mcp\/server\/host\.js/,
};

let dir: string;
let log: string;
let daemon: DaemonProcess;

const loaded = (): string[] => readFileSync(log, 'utf8').split('\n').filter(Boolean);
const present = (pattern: RegExp): boolean => loaded().some((url) => pattern.test(url));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'organism-start-modules-'));
  log = join(dir, 'modules.log');
  writeFileSync(log, '');
  // Loader hooks run on a thread of their own; each URL is appended as it loads.
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)});
`,
  );
  daemon = await startDaemonProcess([], { NODE_OPTIONS: `--import ${pathToFileURL(register).href}` });
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the default organism at start', () => {
  it('has loaded its own code, and none of the modules left for first use', () => {
    // The hook works: the daemon's own code (bundled by the build: bin/bundle-daemon.js) and the
    // package its listeners import are in the log. What is left for first use is imported from
    // modules of its own, never bundled, so the hook sees it whenever it loads.
    expect(present(/\/dist\/src\/cli\/commands\/daemon-bundle-[^/]+\.js$/)).toBe(true);
    expect(present(/\/dist\/src\/index\.js$/)).toBe(true);
    const early = Object.entries(NOT_AT_START)
      .filter(([, pattern]) => present(pattern))
      .map(([what, pattern]) => `${what}: ${loaded().find((url) => pattern.test(url))}`);
    expect(early).toEqual([]);
  });

  it("loads the XSD writer when a listener's schema is asked for", async () => {
    const res = await daemonFetch(`${daemon.url}/api/v1/listeners/greeter/schema`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { xsd: string };
    expect(body.xsd).toContain('<xs:element name="greeting"');
    expect(present(NOT_AT_START['the XSD writer']!)).toBe(true);
  });

  it('loads the MCP server host and the SDK at the first /mcp request', async () => {
    const res = await daemonFetch(`${daemon.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'probe', version: '1' },
        },
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"serverInfo"');
    expect(present(NOT_AT_START['the MCP server host']!)).toBe(true);
    expect(present(NOT_AT_START['the MCP SDK']!)).toBe(true);
  });

  it('loads the embedded librarian at the first librarian call, and never the eXist one', async () => {
    const stored = await useTool(daemon.url, 'librarian_store', {
      collection: 'notes',
      document_name: 'a.xml',
      content: '<note><title>start</title></note>',
    });
    expect(stored.status).toBe('ok');
    expect(present(NOT_AT_START['the embedded librarian backend']!)).toBe(true);
    expect(present(NOT_AT_START['the eXist librarian backend']!)).toBe(false);

    const titles = await useTool(daemon.url, 'librarian_query', {
      query: "collection('/db/organism')//note/title/string()",
    });
    expect(titles).toEqual({ status: 'ok', result: { hits: 1, results: ['start'] } });
    // The read-only check, now imported at the first query, still refuses a write.
    const write = await useTool(daemon.url, 'librarian_query', { query: "xmldb:remove('/db/organism')" });
    expect(write.status).not.toBe('ok');
    expect(write.result.code).toBe('librarian.read_only');
  });
});
