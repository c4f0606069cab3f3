/**
 * Builds the whole tool runtime from a loaded organism: discovers and registers the native tools and
 * the user's `tool_modules`, sets up their shared services (config + resource cache), opens the
 * audit log, loads the integrity manifest and the revocations, and checks every grant and
 * tool_config. Defaults live in defaultToolRuntimeOptions().
 */
import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { auditKeyOptions, loadAuditKeys } from '../audit/key.ts';
import { AuditLog, type AuditSink } from '../audit/log.ts';
import { auditCheckpointOptions } from '../audit/setup.ts';
import type { LoadedOrganism } from '../config/index.ts';
import type { OrganismConfig } from '../config/types.ts';
import { ConfigError } from '../errors.ts';
import { daemonFiles } from '../guard/file.ts';
import { checkCall } from '../guard/index.ts';
import { organismCode } from '../guard/organism-code.ts';
import type { AttachedMcp } from '../mcp/client/index.ts';
import { mcpIdentityGrants, mcpServers, renameIdentityIssues } from '../mcp/config.ts';
import type { ApprovalGate } from './approval/gate.ts';
import { type CatalogEntry, loadOrganismCatalog, PACKAGE_ROOT } from './catalog.ts';
import { Dispatcher, type DispatcherDefaults, type GuardCheck } from './dispatcher.ts';
import { IntegrityChecker, parsePublicKey } from './integrity.ts';
import { ownCode, ownDataFiles, toolPaths } from './own-files.ts';
import { type RegisteredTool, ToolRegistry } from './registry.ts';
import { RevocationWatcher } from './revocations.ts';
import { createToolServices } from './services.ts';
import type { ToolDefinition, ToolServices } from './types.ts';
import { workspaceVolumeFor } from './workspace-volume.ts';

export interface ToolRuntimeOptions {
  /** Folder holding tools/ and librarian/tools/ (default: Organism's own package root). */
  root?: string;
  /** Discover the native tools under root and the config's `tool_modules` (default true). */
  discover?: boolean;
  /** More tools, registered after the discovered ones (embedders, tests). */
  tools?: ToolDefinition[];
  /** Services handed to tools (default: the config plus a resource cache closed by close()). */
  services?: ToolServices;
  /** The guard (default: src/guard's checkCall). */
  guard?: GuardCheck;
  /** Audit sink (default: an AuditLog at config.audit.path, sealed with the organism's audit key). */
  audit?: AuditSink;
  /** How often the revocations file is polled, ms (default 2000, well within the 10 s promise). */
  revocationPollMs?: number;
  /** One-line warnings (unsigned manifest, bad revocations file...). Default: stderr. */
  warn?: (message: string) => void;
  /** Environment for `tools.public_key_env` and `audit.key_env` (default process.env). */
  env?: NodeJS.ProcessEnv;
  defaults?: Partial<DispatcherDefaults>;
  /** Where calls that need a person's approval wait; the daemon's one gate, kept across reloads. */
  approvals?: ApprovalGate;
  /**
   * Mount the workspace's size-bounded volume (organism.workspace_max_bytes) for the life of the
   * services' resources, when some listener may write the workspace (default false: the daemon and
   * `organism tools call` ask for it; an embedder or a test that only reads does not). Or the mount
   * under way, started by the caller with workspaceVolumeFor() on the same resources (the daemon
   * starts it early and loads the rest meanwhile): no call runs and no MCP server starts before
   * it is in place (`ready`).
   */
  workspaceVolume?: boolean | Promise<unknown>;
  /** Organism's own tools, loaded already by loadToolCatalog(root) (default: loaded here). */
  catalog?: readonly CatalogEntry[];
}

export function defaultToolRuntimeOptions(): Required<
  Pick<ToolRuntimeOptions, 'root' | 'discover' | 'revocationPollMs' | 'warn' | 'workspaceVolume'>
> {
  return {
    root: PACKAGE_ROOT,
    discover: true,
    revocationPollMs: 2000,
    workspaceVolume: false,
    warn: (message) => process.stderr.write(`[organism tools] ${message}\n`),
  };
}

export interface ToolRuntime {
  registry: ToolRegistry;
  dispatcher: Dispatcher;
  audit: AuditSink;
  services: ToolServices;
  integrity: IntegrityChecker;
  revocations: RevocationWatcher;
  /** The MCP servers' connections, when organism.yaml has `mcp_servers:` (src/mcp/client). */
  mcp?: AttachedMcp;
  /**
   * Settles when the workspace's volume is in place (at once when none is mounted); rejects with
   * why it could not be mounted. Calls wait for it.
   */
  ready: Promise<void>;
  /** Stops polling, closes the services' resources and flushes the audit log. */
  close(): Promise<void>;
}

/**
 * The log `organism tools call` (and a runtime built without a sink) writes: the daemon's key, so it
 * appends to the same chain, and the same checkpoints, checked before the first call.
 */
async function ownAuditLog(config: OrganismConfig, path: string, env?: NodeJS.ProcessEnv): Promise<AuditLog> {
  const keys = await loadAuditKeys(auditKeyOptions(config, { env, create: true }));
  const log = new AuditLog({
    path,
    keys,
    checkpoints: auditCheckpointOptions(config, env ? { env } : {}),
  });
  await log.open();
  return log;
}

/**
 * The public key the manifest must be signed with: the env var named by `tools.public_key_env`
 * when set, else `<data_dir>/tools-signing.pub` (written by `organism tools sign`).
 */
export function trustedPublicKey(
  config: OrganismConfig,
  env: NodeJS.ProcessEnv = process.env,
): { key?: KeyObject; hint: string } {
  const name = (config.tools as Partial<OrganismConfig['tools']> | undefined)?.public_key_env;
  if (name) {
    const value = env[name];
    const hint = `environment variable ${name}`;
    if (!value) return { hint: `${hint} is not set` };
    return { key: parsePublicKey(value, hint), hint };
  }
  const path = toolPaths(config).publicKey;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { hint: `no ${path}; set tools.public_key_env or run 'organism tools sign'` };
  }
  return { key: parsePublicKey(text, path), hint: path };
}

export async function createToolRuntime(
  loaded: Pick<LoadedOrganism, 'config'>,
  options: ToolRuntimeOptions = {},
): Promise<ToolRuntime> {
  const opts = { ...defaultToolRuntimeOptions(), ...stripUndefined(options) };
  const config = loaded.config;
  const paths = toolPaths(config);
  const warn = opts.warn;
  // The file guard refuses these to every file tool, wherever the workspace is (src/guard/file.ts).
  const env = opts.env ?? process.env;
  daemonFiles.set(config.file ?? paths.dataDir, ownDataFiles(config, env));

  const registry = new ToolRegistry();
  if (opts.discover) {
    for (const entry of await loadOrganismCatalog(config, opts.root, opts.catalog))
      registry.register(entry.definition, { module: entry.module });
  }
  for (const tool of opts.tools ?? []) registry.register(tool);

  const guard = opts.guard ?? checkCall;
  const audit = opts.audit ?? (await ownAuditLog(config, paths.audit, opts.env));
  const owned = opts.services ? undefined : createToolServices(config, opts.env);
  const services = opts.services ?? (owned as NonNullable<typeof owned>).services;
  const revocations = new RevocationWatcher({ path: paths.revocations, pollMs: opts.revocationPollMs, warn });
  // This runtime's code files, protected until it closes (a reload's old and new ones overlap).
  const codeKey = Symbol('tool runtime');
  const shutdown = async () => {
    organismCode.delete(codeKey);
    revocations.close();
    for (const failure of (await owned?.resources.closeAll()) ?? [])
      warn(`a tool resource did not close cleanly: ${failure}`);
    await audit.close();
  };
  try {
    const publicKey = trustedPublicKey(config, opts.env);
    // A tool that fails its integrity check, native or an MCP server's: one threat record each.
    const threat = (tool: string, reason: string, module?: string) =>
      audit.append({
        type: 'threat',
        time: new Date().toISOString(),
        kind: 'integrity',
        tool,
        reason,
        module: module ?? null,
      });
    const integrity = await IntegrityChecker.load({
      manifestPath: paths.manifest,
      publicKey: publicKey.key,
      publicKeyHint: publicKey.hint,
      warn,
      threat,
    });
    for (const tool of registry.list()) integrity.check(tool); // a threat record for each bad module, now
    // The workspace's size bound, before anything can write there (workspace-volume.ts): mounted
    // now, or the caller's mount under way, which every call waits for (the dispatcher's `ready`).
    const volume =
      opts.workspaceVolume === true
        ? await workspaceVolumeFor(config, services.resources, warn)
        : opts.workspaceVolume || undefined;
    const ready = Promise.resolve(volume).then(() => {});
    ready.catch(() => {}); // the caller's to see (a failed start), and each call's
    // MCP servers' tools (`<server>.<tool>`); the SDK is loaded only when some are configured. A
    // server may be given organism.workspace: none starts before its volume is in place.
    let mcp: AttachedMcp | undefined;
    if (mcpServers(config).length > 0) {
      await ready;
      mcp = await (await import('../mcp/client/index.ts')).attachMcp({
        config,
        registry,
        services,
        env: opts.env ?? services.env ?? process.env,
        manifestPath: paths.manifest,
        publicKey: publicKey.key,
        warn,
        threat,
        workspaceVolume: opts.workspaceVolume !== false,
      });
    }

    // The file tools write none of the organism's code, whatever allowed_paths says (guard/organism-code.ts).
    const code = await ownCode(config);
    organismCode.set(codeKey, code);
    const dispatcher = new Dispatcher({
      registry,
      // The `mcp:` identity is a listener to the dispatcher: MCP clients' calls of native tools.
      listeners: [...config.listeners, ...mcpIdentityGrants(config)],
      workspace: paths.workspace,
      dataDir: paths.dataDir,
      guard,
      audit,
      integrity: mcp
        ? {
            check: (tool: RegisteredTool) => {
              const external = mcp.integrity(tool); // undefined: not an MCP tool
              return external === undefined ? integrity.check(tool) : external;
            },
          }
        : integrity,
      revocations,
      services,
      configFile: config.file,
      ...(opts.defaults ? { defaults: opts.defaults } : {}),
      ...(opts.approvals ? { approvals: opts.approvals } : {}),
      ...(volume instanceof Promise ? { ready } : {}),
    });
    // Say it at every start: a listener running a tool less contained than the default (sandbox: none).
    for (const { listener, tool, notice } of dispatcher.notices())
      warn(`listener ${listener}: ${tool} ${notice}`);

    let closing: Promise<void> | undefined;
    return {
      registry,
      dispatcher,
      audit,
      services,
      integrity,
      revocations,
      ...(mcp ? { mcp } : {}),
      ready,
      close: () => {
        closing ??= shutdown();
        return closing;
      },
    };
  } catch (error) {
    await shutdown().catch(() => {});
    // A bad grant of the `mcp:` identity is named by its section, not as a listener it is not.
    if (error instanceof ConfigError)
      throw new ConfigError(renameIdentityIssues(error.issues, config.listeners.length));
    throw error;
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
