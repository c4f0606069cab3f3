/** Temp organisms with MCP servers, and the tool runtime built from them as the daemon builds it. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/index.ts';
import { type Daemon, startDaemon } from '../../src/daemon.ts';
import { until as waitFor } from '../../src/testing/index.ts';
import { createToolRuntime, type ToolRuntime } from '../../src/tools/runtime.ts';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const EVERYTHING = join(REPO, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = join(REPO, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const RUG = join(REPO, 'test/mcp/fixtures/rug-server.mjs');

export interface TempOrganism {
  dir: string;
  config: string;
  dataDir: string;
  workspace: string;
}

/** Writes organism.yaml (with `yaml` as its listeners and further sections) into a fresh folder. */
export async function tempOrganism(yaml: string): Promise<TempOrganism> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-mcp-'));
  const config = join(dir, 'organism.yaml');
  await writeFile(
    config,
    `organism:\n  name: mcp-test\n  data_dir: ./data\n  workspace: ./workspace\n  log_level: silent\n${yaml}`,
  );
  return { dir, config, dataDir: join(dir, 'data'), workspace: join(dir, 'workspace') };
}

export async function startRuntime(
  o: TempOrganism,
  env: NodeJS.ProcessEnv = {},
  warnings: string[] = [],
): Promise<ToolRuntime> {
  const loaded = await loadConfig(o.config, { loadModules: false, env: { ...process.env, ...env } });
  return createToolRuntime(loaded, {
    warn: (m) => warnings.push(m),
    env: { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, PATH: process.env.PATH, ...env },
  });
}

export function call(
  runtime: ToolRuntime,
  listener: string,
  tool: string,
  args: unknown = {},
  scope?: string[],
) {
  return runtime.dispatcher.call({
    tool,
    args,
    listener,
    thread: `t-${Math.random()}`,
    ...(scope ? { scope: scope as never } : {}),
  });
}

/** The kit's until() (src/testing) with room for an MCP server to start: 15 s, probes 50 ms apart. */
export function until(check: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<boolean> {
  return waitFor(check, { what, timeoutMs: ms, intervalMs: 50 });
}

export const OPERATOR_TOKEN = 'operator-token-0123456789abcdef';
export const VIEWER_TOKEN = 'viewer-token-0123456789abcdef';

/**
 * The real daemon serving MCP: tokens for an operator (`ops`) and a viewer (`watcher`), the `mcp`
 * identity granted calculate, the `upper` listener offered (mcp: true), and `extraListeners`.
 */
export async function servingDaemon(
  extraListeners = '',
): Promise<{ daemon: Daemon; organism: TempOrganism }> {
  const upper = JSON.stringify(join(REPO, 'test/mcp/fixtures/upper.ts'));
  const organism = await tempOrganism(`auth:
  tokens:
    - { name: ops, role: operator, token_env: MCP_OPS_TOKEN }
    - { name: watcher, role: viewer, token_env: MCP_VIEW_TOKEN }
mcp:
  tools: [calculate]
listeners:
  - name: upper
    handler: ${upper}
    mcp: true
${extraListeners.replaceAll('$UPPER', upper)}`);
  const daemon = await startDaemon({
    configPath: organism.config,
    port: 0,
    host: '127.0.0.1',
    reloadOnSighup: false,
    env: { ...process.env, MCP_OPS_TOKEN: OPERATOR_TOKEN, MCP_VIEW_TOKEN: VIEWER_TOKEN },
  });
  return { daemon, organism };
}
