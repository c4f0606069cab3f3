/**
 * mcp_serve_call_us_p50: one tools/call through the daemon's /mcp (Streamable HTTP with a session,
 * SSE answers, bearer token, the call through the dispatcher as the `mcp` identity: grants, ajv,
 * scope, rate/loop, timeout, cap, audit to disk), against the same call on a bare SDK server in the
 * same process (the SDK's Server on the same transport, a session, a handler that only answers).
 * Both tools answer `Echo: <message>`; the SDK's Client calls both over loopback HTTP; batches
 * alternate so drift hits both alike. Target: at most 1.3x the bare SDK server.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServerType, serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startDaemon } from '../src/daemon.ts';
import { percentile, round } from './support.ts';

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
/** An organism needs one listener: the default organism's printer, never called here. */
const PRINTER = fileURLToPath(new URL('../listeners/printer.ts', import.meta.url));

/**
 * The floor: the SDK's low-level Server with the same tool on the transport the daemon uses (the
 * web-standard one, a session each, SSE answers, served by @hono/node-server as the daemon's API
 * is), with nothing else in front of it.
 */
async function bareSdkServer(): Promise<{ url: string; close(): Promise<void> }> {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const handle = async (request: Request): Promise<Response> => {
    const id = request.headers.get('mcp-session-id');
    const known = id === null ? undefined : transports.get(id);
    if (known) return known.handleRequest(request);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => transports.set(sid, transport),
    });
    const server = new Server({ name: 'bare', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        { name: 'echo', description: 'Echoes the message.', inputSchema: ECHO_ARGS as { type: 'object' } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({
      content: [{ type: 'text', text: `Echo: ${(request.params.arguments as { message: string }).message}` }],
    }));
    await server.connect(transport);
    return transport.handleRequest(request);
  };
  const http = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: handle, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      for (const t of transports.values()) await t.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

export async function measureServe(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-bench-mcp-serve-'));
  await mkdir(join(dir, 'tools'));
  await writeFile(join(dir, 'tools/echo.mjs'), TOOL_MODULE);
  await writeFile(
    join(dir, 'organism.yaml'),
    `organism:\n  name: bench-serve\n  data_dir: ./data\n  workspace: ./workspace\n  log_level: silent\n` +
      `auth:\n  tokens:\n    - { name: bench, role: operator, token_env: BENCH_SERVE_TOKEN }\n` +
      `listeners:\n  - name: printer\n    handler: ${JSON.stringify(PRINTER)}\n` +
      `tool_modules: [./tools]\nmcp:\n  tools: [echo]\n`,
  );
  const daemon = await startDaemon({
    configPath: join(dir, 'organism.yaml'),
    port: 0,
    host: '127.0.0.1',
    reloadOnSighup: false,
    env: { ...process.env, BENCH_SERVE_TOKEN: TOKEN },
  });
  const bare = await bareSdkServer();
  const viaDaemon = await connect(`${daemon.url}/mcp`, { authorization: `Bearer ${TOKEN}` });
  const viaBare = await connect(bare.url);
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
        "the daemon's HTTP stack (security headers, bearer token, body limit), its MCP session and event store, SSE answer, the dispatcher as the mcp identity (grants, ajv, scope, rate/loop, timeout, cap, audit to disk); the floor: the SDK's Server on the same web-standard transport and node server adapter, with a session and a handler that only answers",
    };
  } finally {
    await viaDaemon.close();
    await viaBare.close();
    await bare.close();
    await daemon.close(100);
    await rm(dir, { recursive: true, force: true });
  }
}
