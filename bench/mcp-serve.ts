/**
 * mcp_serve_call_us_p50: one tools/call through the daemon's /mcp, started as a user starts it
 * (`node bin/organism.js run`: Streamable HTTP with a session, SSE answers, bearer token, the call
 * through the dispatcher as the `mcp` identity: grants, ajv, scope, rate/loop, timeout, cap, audit
 * to disk), against the same call on a bare SDK server in a process of its own (the SDK's Server
 * on the same web-standard transport and node adapter, a session, a handler that only answers).
 * Both tools answer `Echo: <message>`; the SDK's Client here calls both over loopback HTTP;
 * batches alternate so drift hits both alike. Target: at most 1.3x the bare SDK server.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { percentile, round } from './support.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const WARMUP = 1_000;
const BATCHES = 20;
const PER_BATCH = 50;
const TOKEN = 'bench-serve-token-0123456789abcdef';

const ECHO_ARGS = {
  type: 'object',
  properties: { message: { type: 'string' } },
  required: ['message'],
  additionalProperties: false,
};

/** The daemon's side: an own tool module (plain object, no import) granted to the mcp identity. */
const TOOL_MODULE = `export default {
  name: 'echo',
  description: 'Echoes the message.',
  args: ${JSON.stringify(ECHO_ARGS)},
  readOnly: true,
  capability: 'read',
  source: 'native',
  run: async ({ message }) => \`Echo: \${message}\`,
};
`;

const sdk = (path: string) =>
  JSON.stringify(pathToFileURL(join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm', path)).href);

/** The floor, a program of its own: the SDK's Server on the transport the daemon uses, nothing else. */
const BARE_SERVER = `import { randomUUID } from 'node:crypto';
import { serve } from ${JSON.stringify(pathToFileURL(join(ROOT, 'node_modules/@hono/node-server/dist/index.mjs')).href)};
import { Server } from ${sdk('server/index.js')};
import { WebStandardStreamableHTTPServerTransport } from ${sdk('server/webStandardStreamableHttp.js')};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${sdk('types.js')};
const transports = new Map();
const handle = async (request) => {
  const known = transports.get(request.headers.get('mcp-session-id'));
  if (known) return known.handleRequest(request);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: randomUUID,
    onsessioninitialized: (id) => transports.set(id, transport),
  });
  const server = new Server({ name: 'bare', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'echo', description: 'Echoes the message.', inputSchema: ${JSON.stringify(ECHO_ARGS)} }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (r) => ({
    content: [{ type: 'text', text: 'Echo: ' + r.params.arguments.message }],
  }));
  await server.connect(transport);
  return transport.handleRequest(request);
};
// The platform's Response kept on globalThis, as the daemon keeps it (src/server/http.ts) and as the
// SDK's own node transport does.
const s = serve({ fetch: handle, hostname: '127.0.0.1', port: 0, overrideGlobalObjects: false }, () => {
  console.log('listening on http://127.0.0.1:' + s.address().port);
});
`;

/** Starts `args` with this Node and resolves with the URL its "listening on" line names. */
function started(args: string[], env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not start:\n${out}`));
    }, 30_000);
    const look = (chunk: Buffer) => {
      out += chunk;
      const match = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({ url: match[1] as string, child });
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}:\n${out}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

export async function measureServe(): Promise<Record<string, unknown>> {
  const build = spawnSync(process.execPath, [join(ROOT, 'bin/build.js'), '--if-stale'], { stdio: 'inherit' });
  if (build.status !== 0 && !existsSync(join(ROOT, 'dist/src/cli/main.js')))
    throw new Error('bench mcp-serve: `node bin/build.js` failed and left no dist/');
  const dir = await mkdtemp(join(tmpdir(), 'organism-bench-mcp-serve-'));
  await mkdir(join(dir, 'tools'));
  await writeFile(join(dir, 'tools/echo.mjs'), TOOL_MODULE);
  await writeFile(join(dir, 'bare-server.mjs'), BARE_SERVER);
  // An organism needs one listener: the default organism's printer, never called here.
  const printer = join(ROOT, 'listeners/printer.ts');
  await writeFile(
    join(dir, 'organism.yaml'),
    `organism:\n  name: bench-serve\n  data_dir: ./data\n  workspace: ./workspace\n  log_level: info\n` +
      `auth:\n  tokens:\n    - { name: bench, role: operator, token_env: BENCH_SERVE_TOKEN }\n` +
      `listeners:\n  - name: printer\n    handler: ${JSON.stringify(printer)}\n` +
      `tool_modules: [./tools]\nmcp:\n  tools: [echo]\n`,
  );
  const env = { ...process.env, BENCH_SERVE_TOKEN: TOKEN };
  const daemon = await started(
    [join(ROOT, 'bin/organism.js'), 'run', '--config', join(dir, 'organism.yaml'), '--port', '0'],
    env,
  );
  const bare = await started([join(dir, 'bare-server.mjs')], env).catch(async (error) => {
    await stop(daemon.child);
    throw error;
  });
  const viaDaemon = await connect(`${daemon.url}/mcp`, { authorization: `Bearer ${TOKEN}` });
  const viaBare = await connect(`${bare.url}/mcp`);
  try {
    let n = 0;
    const timed = async (client: Client) => {
      const message = `m${n++}`;
      const start = performance.now();
      const result = await client.callTool({ name: 'echo', arguments: { message } });
      const us = (performance.now() - start) * 1000;
      const text = (result.content as Array<{ text?: string }>)[0]?.text;
      if (text !== `Echo: ${message}`) throw new Error(`echo answered ${JSON.stringify(result)}`);
      return us;
    };
    for (let i = 0; i < WARMUP; i++) {
      await timed(viaDaemon);
      await timed(viaBare);
    }
    const through: number[] = [];
    const floor: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      for (let i = 0; i < PER_BATCH; i++) through.push(await timed(viaDaemon));
      for (let i = 0; i < PER_BATCH; i++) floor.push(await timed(viaBare));
    }
    through.sort((a, b) => a - b);
    floor.sort((a, b) => a - b);
    const p50 = percentile(through, 50);
    const floorP50 = percentile(floor, 50);
    return {
      bench: 'mcp-serve',
      mcp_serve_call_us_p50: round(p50),
      mcp_serve_call_us_p99: round(percentile(through, 99)),
      floor_bare_sdk_server_call_us_p50: round(floorP50),
      floor_bare_sdk_server_call_us_p99: round(percentile(floor, 99)),
      ratio_p50: round(p50 / floorP50, 2),
      target_ratio_max: 1.3,
      calls: BATCHES * PER_BATCH,
      includes:
        "the daemon as started by `organism run`: its HTTP stack (security headers, bearer token, body limit), MCP session and event store, SSE answer, the dispatcher as the mcp identity (grants, ajv, scope, rate/loop, timeout, cap, audit to disk); the floor: the SDK's Server on the same web-standard transport and node adapter in a process of its own, a session and a handler that only answers",
    };
  } finally {
    await viaDaemon.close();
    await viaBare.close();
    await stop(bare.child);
    await stop(daemon.child);
    await rm(dir, { recursive: true, force: true });
  }
}
