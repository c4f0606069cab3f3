/**
 * mcp_tool_call_overhead_us_p50: server-everything's `echo` over stdio, called through the
 * dispatcher (grants, pinned tool list checked, ajv against its inputSchema, scope, rate/loop,
 * timeout, cap, audit to disk) and, in the same run, called directly with the SDK's Client that is
 * connected to that very server process (in its sandbox). Batches alternate so drift hits both
 * alike. Target: at most 1.3x the direct call.
 *
 * Then the other way (bench/mcp-serve.ts): a call through the daemon's /mcp against the same call
 * on a bare SDK server, also at most 1.3x.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureIo } from '../src/cli/io.ts';
import { main } from '../src/cli/main.ts';
import { loadConfig } from '../src/config/index.ts';
import { createToolRuntime } from '../src/tools/runtime.ts';
import { measureServe } from './mcp-serve.ts';
import { percentile, round } from './support.ts';

const EVERYTHING = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
// A daemon runs for days: the figure is its steady state. With 200 warm-up calls the first
// measured ones were still being optimised by V8 (p99 ~2 ms, p50 unsteady).
const WARMUP = 3_000;
const BATCHES = 20;
const PER_BATCH = 100;

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-bench-mcp-'));
  const config = join(dir, 'organism.yaml');
  await writeFile(
    config,
    `organism:\n  name: bench\n  data_dir: ./data\n  workspace: ./workspace\n  log_level: silent\nmcp_servers:\n  - name: every\n    command: ${process.execPath}\n    args: [${JSON.stringify(EVERYTHING)}, stdio]\n    capabilities: { echo: read }\nlisteners:\n  - name: caller\n    description: Calls echo.\n    agent: true\n    tools: [every.echo]\n`,
  );
  const io = captureIo();
  if ((await main(['tools', 'sign', '--config', config], io)) !== 0)
    throw new Error(`tools sign failed: ${io.stderr.join('\n')}`);
  const runtime = await createToolRuntime(await loadConfig(config, { loadModules: false }), {
    warn: () => {},
  });
  const direct = runtime.mcp?.pool.get('every')?.sdkClient;
  if (!direct) throw new Error('server-everything did not start');
  try {
    let n = 0;
    const viaDispatcher = async () => {
      const start = performance.now();
      const result = await runtime.dispatcher.call({
        tool: 'every.echo',
        args: { message: `m${n++}` },
        listener: 'caller',
        thread: `bench-${n}`,
      });
      const us = (performance.now() - start) * 1000;
      if (result.status !== 'ok') throw new Error(`echo through the dispatcher: ${JSON.stringify(result)}`);
      return us;
    };
    const directly = async () => {
      const start = performance.now();
      await direct.callTool({ name: 'echo', arguments: { message: `m${n++}` } });
      return (performance.now() - start) * 1000;
    };
    for (let i = 0; i < WARMUP; i++) {
      await viaDispatcher();
      await directly();
    }
    const through: number[] = [];
    const floor: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      for (let i = 0; i < PER_BATCH; i++) through.push(await viaDispatcher());
      for (let i = 0; i < PER_BATCH; i++) floor.push(await directly());
    }
    through.sort((a, b) => a - b);
    floor.sort((a, b) => a - b);
    const p50 = percentile(through, 50);
    const directP50 = percentile(floor, 50);
    yield {
      bench: 'mcp',
      mcp_tool_call_overhead_us_p50: round(p50 - directP50),
      mcp_tool_call_us_p50: round(p50),
      mcp_tool_call_us_p99: round(percentile(through, 99)),
      floor_direct_sdk_call_us_p50: round(directP50),
      floor_direct_sdk_call_us_p99: round(percentile(floor, 99)),
      ratio_p50: round(p50 / directP50, 2),
      target_ratio_max: 1.3,
      calls: BATCHES * PER_BATCH,
      includes:
        'registry, grants, revocation, integrity (pinned tool list), ajv on the server inputSchema, scope, rate/loop, timeout with cancel, cap, audit to disk; the server runs in the bubblewrap sandbox',
    };
  } finally {
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  }
  yield await measureServe();
}
