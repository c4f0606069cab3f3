/**
 * MCP servers' tools in the tool runtime. Loaded (with the SDK) only when organism.yaml has
 * `mcp_servers:`; src/tools/runtime.ts imports this file dynamically.
 *
 * Connections outlive a tool runtime: they sit in the services' resource cache (one pool per
 * daemon), so a reload that leaves a server's config as it was keeps its process and session.
 */
import type { KeyObject } from 'node:crypto';
import type { OrganismConfig } from '../../config/types.ts';
import { runtimeStateFor } from '../../state/index.ts';
import { canonicalJson } from '../../tools/canonical.ts';
import type { RegisteredTool, ToolRegistry } from '../../tools/registry.ts';
import type { ToolServices } from '../../tools/types.ts';
import { ensureVolume, serverImage } from '../../tools/workspace-volume.ts';
import { mcpServers, type ResolvedServerConfig, resolveServerConfig } from '../config.ts';
import { splitQualified } from '../names.ts';
import { serverWorkspace, serverWorkspaceProblem } from '../workspace.ts';
import { McpConnection } from './connection.ts';
import { stateOAuthStore } from './oauth/store.ts';
import { type McpPins, pinOf, watchedPins } from './pins.ts';
import { ServerToolset } from './toolset.ts';

export { McpConnection, type RemoteTool } from './connection.ts';
export { type McpPins, pinOf, withMcpPins } from './pins.ts';

/** The daemon's connections, by server name; a server whose config changed gets a new one. */
export class McpPool {
  readonly #connections = new Map<string, { key: string; connection: McpConnection }>();

  acquire(server: ResolvedServerConfig, deps: ConstructorParameters<typeof McpConnection>[1]): McpConnection {
    const key = canonicalJson(server);
    const existing = this.#connections.get(server.name);
    if (existing && existing.key === key && existing.connection.state !== 'closed')
      return existing.connection;
    if (existing) void existing.connection.close();
    const connection = new McpConnection(server, deps);
    this.#connections.set(server.name, { key, connection });
    return connection;
  }

  /** Closes the servers no longer configured. */
  retain(names: ReadonlySet<string>): void {
    for (const [name, entry] of this.#connections) {
      if (names.has(name)) continue;
      this.#connections.delete(name);
      void entry.connection.close();
    }
  }

  get(name: string): McpConnection | undefined {
    return this.#connections.get(name)?.connection;
  }

  async close(): Promise<void> {
    const all = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(all.map((e) => e.connection.close()));
  }
}

export interface AttachOptions {
  config: OrganismConfig;
  registry: ToolRegistry;
  services: ToolServices;
  env: NodeJS.ProcessEnv;
  manifestPath: string;
  publicKey: KeyObject | undefined;
  warn(message: string): void;
  /** A tool failing its pin (a rug pull): a threat record in the audit log, once per tool and reason. */
  threat?(tool: string, reason: string): void;
  /** Mount each sandboxed stdio server's workspace on a size-bounded volume (the daemon's runtime). */
  workspaceVolume?: boolean;
}

export interface AttachedMcp {
  pool: McpPool;
  /** Integrity of an MCP tool: a reason, null when it passes; undefined for a tool not from MCP. */
  integrity(tool: RegisteredTool): string | null | undefined;
  close(): void;
}

/** Every granted `<server>.<tool>` in the config's listeners and `mcp` identity. */
export function grantedMcpTools(config: OrganismConfig): string[] {
  const names = new Set<string>();
  const identity = (config.mcp as { tools?: string[] } | undefined)?.tools ?? [];
  for (const name of [...config.listeners.flatMap((l) => l.tools), ...identity])
    if (splitQualified(name)) names.add(name);
  return [...names];
}

/** Registers the servers' tools; starts the servers configured to start with the daemon and waits for them (bounded). */
export async function attachMcp(options: AttachOptions): Promise<AttachedMcp> {
  const { config, registry, services, env, warn } = options;
  const servers = mcpServers(config).map(resolveServerConfig);
  // A sandboxed server writes its own workspace: bounded like organism.workspace, before it starts.
  // Made before the pool, so at shutdown the servers are stopped before their volumes are let go.
  if (options.workspaceVolume) {
    for (const server of servers) {
      if (server.url !== undefined || server.sandbox === 'none' || serverWorkspaceProblem(server, config))
        continue;
      const folder = {
        dir: serverWorkspace(server, config),
        image: serverImage(config, server.name),
        what: `MCP server ${server.name}'s workspace`,
        writers: 'The server',
      };
      await ensureVolume(config, folder, services.resources, warn).catch((error: unknown) =>
        warn(`MCP server ${server.name}: its workspace's volume: ${(error as Error).message}`),
      );
    }
  }
  const pool = await services.resources.get(
    'mcp:pool',
    () => new McpPool(),
    (p) => p.close(),
  );
  const pins = watchedPins(options.manifestPath, options.publicKey);
  pool.retain(new Set(servers.map((s) => s.name)));
  const granted = grantedMcpTools(config);
  const sets = new Map<string, ServerToolset>();
  const reported = new Set<string>();
  /** `<server>.<tool>` -> its toolset and remote name (null: not one of these servers'), parsed once. */
  const owners = new Map<string, { set: ServerToolset; tool: string } | null>();
  // OAuth tokens live in the runtime state (sealed, encrypted), where no tool reaches.
  const oauthStore = stateOAuthStore(() => runtimeStateFor(services));
  for (const server of servers) {
    const connection = pool.acquire(server, { config, env, oauthStore });
    sets.set(server.name, new ServerToolset({ registry, connection, pins, granted }));
  }
  await Promise.all(
    servers
      .filter((s) => s.start === 'daemon')
      .map((s) =>
        pool
          .get(s.name)
          ?.start()
          .then(() => {
            const skipped = pool.get(s.name)?.skipped ?? [];
            if (skipped.length > 0)
              warn(
                `MCP server ${s.name}: tools with names MCP does not allow left out: ${skipped.map((n) => JSON.stringify(n.slice(0, 80))).join(', ')}`,
              );
          })
          .catch((error: unknown) => warn(`MCP server ${s.name}: ${(error as Error).message}`)),
      ),
  );
  return {
    pool,
    integrity(tool) {
      if (tool.definition.source !== 'external') return undefined;
      const name = tool.definition.name;
      let owner = owners.get(name);
      if (owner === undefined) {
        const parts = splitQualified(name);
        const set = parts ? sets.get(parts.server) : undefined;
        owner = set && parts ? { set, tool: parts.tool } : null;
        owners.set(name, owner);
      }
      if (owner === null) return undefined;
      const reason = owner.set.integrity(owner.tool);
      if (reason !== null) {
        const key = `${tool.definition.name}\u0000${reason}`;
        if (!reported.has(key)) {
          reported.add(key);
          options.threat?.(tool.definition.name, reason);
        }
      }
      return reason;
    },
    close() {
      for (const set of sets.values()) set.close();
    },
  };
}

/**
 * Starts every configured server, lists its tools and returns their pins, for `organism tools
 * sign`. A server that does not start fails the signing: a manifest that silently left one out
 * would refuse all its tools later.
 */
export async function collectPins(config: OrganismConfig, env: NodeJS.ProcessEnv): Promise<McpPins> {
  const pins: McpPins = {};
  for (const server of mcpServers(config).map(resolveServerConfig)) {
    const connection = new McpConnection({ ...server, restart_initial_ms: 3_600_000 }, { config, env });
    try {
      await connection.start();
      const tools: Record<string, string> = {};
      for (const tool of connection.tools.values()) tools[tool.name] = pinOf(tool);
      pins[server.name] = tools;
    } finally {
      await connection.close();
    }
  }
  return pins;
}
