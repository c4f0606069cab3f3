/**
 * `organism tools list|call|sign|revoke|unrevoke`: the tool runtime from the command line, for users
 * trying a policy and for tests. `call` goes through the full dispatcher (grants, guard, limits,
 * audit) exactly as a listener's call would.
 */
import { createPublicKey, type KeyObject, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { configSecrets, knownSecrets, redactKnown } from '../../audit/redact.ts';
import { loadConfig } from '../../config/index.ts';
import type { OrganismConfig } from '../../config/types.ts';
import { ensureOrganismFolders } from '../../daemon/folders.ts';
import { UsageError } from '../../errors.ts';
import { ownApi } from '../../guard/own-api.ts';
import { redisAddress } from '../../kv/redis.ts';
import { mcpServers } from '../../mcp/config.ts';
import { liveDaemonAddress } from '../../server/address-file.ts';
import { CLIENT_OPTIONS, DaemonClient, resolveTarget, URL_ENV } from '../../server/client.ts';
import { loadOrganismCatalog } from '../../tools/catalog.ts';
import {
  buildManifest,
  ensureSigningKey,
  keyId,
  readPrivateKey,
  UNSIGNED_WARNING,
  writeManifest,
} from '../../tools/integrity.ts';
import { toolPaths } from '../../tools/own-files.ts';
import { ToolRegistry } from '../../tools/registry.ts';
import { revokeTool, unrevokeTool } from '../../tools/revocations.ts';
import { createToolRuntime, defaultToolRuntimeOptions, trustedPublicKey } from '../../tools/runtime.ts';
import { revokeShared, sharesState, unrevokeShared } from '../../tools/shared-state.ts';
import { didYouMean } from '../../tools/tool-config.ts';
import { CAPABILITIES, type Capability, type ToolResult } from '../../tools/types.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';

export const summary =
  'list tools, call one through the dispatcher, sign tool modules, revoke/unrevoke a tool';

const HELP = `usage: organism tools <subcommand> [options]

subcommands:
  list [--as LISTENER]                          tools in registration order with descriptions; with --as,
                                                each tool LISTENER cannot use is marked [UNAVAILABLE: reason];
                                                a tool configured less contained than the default (say,
                                                run_command with sandbox: none) is marked [WARNING: ...]
  call TOOL --as LISTENER [--args JSON | JSON] [--scope CAPS] [--local]
                                                one call through the full dispatcher (grants, guard, rate
                                                limit, approval, audit); prints the result as JSON. Exit 0
                                                when the tool ran, 2 when refused, 1 on error. When a
                                                daemon runs for --config (or --url / $ORGANISM_URL names
                                                one), the call runs in it, as that listener's own call
                                                would (its loaded config; approval waits for a person;
                                                audited with the token's name); it needs the admin role,
                                                or operator for --as mcp. --local: in this process, from
                                                the files as they are now (approval is then refused)
  sign [--key FILE]                             write the signed manifest of tool module hashes
                                                (tools.manifest); without --key, the Ed25519 key pair in
                                                the data dir is used (generated on first use)
  revoke TOOL --reason TEXT                     revoke a tool (kept across restarts; a running daemon
                                                picks it up within seconds)
  unrevoke TOOL                                 lift a revocation

options:
  -c, --config FILE   organism.yaml to use (default ./organism.yaml)
      --root DIR      folder holding the built-in tools/ and librarian/tools/ (default: Organism's
                      own); your tool_modules from organism.yaml are added either way
      --scope CAPS    comma-separated capability scope for the call
                      (${CAPABILITIES.join(', ')})
      --local         call: run the call in this process even when a daemon runs
      --url URL       call: the daemon's address (else $ORGANISM_URL, else the one running for --config)
      --token-env NAME  call: environment variable holding the API token (default ORGANISM_TOKEN);
                      unset, the daemon of --config's data dir gets its local token (admin)
  -h, --help          show this help

examples:
  npx organism tools list --as hello
  npx organism tools call word_count --as hello --args '{"text": "two words"}'
  npx organism tools revoke fetch_url --reason "INC-42: posting to an unknown host"`;

const OPTIONS = {
  ...CONFIG_OPTION,
  as: { type: 'string' },
  args: { type: 'string' },
  scope: { type: 'string' },
  key: { type: 'string' },
  reason: { type: 'string' },
  root: { type: 'string' },
  local: { type: 'boolean' },
  ...CLIENT_OPTIONS,
} as const;

type Values = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS);
  const [sub, ...rest] = positionals;
  if (values.help || sub === undefined || sub === 'help') {
    io.out(HELP);
    return sub === undefined && !values.help ? 1 : 0;
  }
  switch (sub) {
    case 'list':
      return list(values, rest, io);
    case 'call':
      return call(values, rest, io);
    case 'sign':
      return sign(values, rest, io);
    case 'revoke':
      return revoke(values, rest, io);
    case 'unrevoke':
      return unrevoke(values, rest, io);
    default:
      throw new UsageError(`unknown subcommand '${sub}'; expected list, call, sign, revoke or unrevoke`);
  }
}

function expectArgs(sub: string, rest: string[], count: number, what: string): void {
  if (rest.length !== count) {
    throw new UsageError(
      count === 0
        ? `tools ${sub} takes no arguments (got ${rest.join(' ')})`
        : `tools ${sub} needs ${what} (got ${rest.length} arguments)`,
    );
  }
}

async function config(values: Values): Promise<OrganismConfig> {
  return (await configAndEnv(values)).config;
}

/** The file's settings (not the listeners' handler modules) and the environment with its .env. */
async function configAndEnv(values: Values): Promise<{ config: OrganismConfig; env: NodeJS.ProcessEnv }> {
  const { config, env } = await loadConfig(values.config, { loadModules: false });
  return { config, env };
}

function checkListener(cfg: OrganismConfig, name: string): void {
  const names = cfg.listeners.map((l) => l.name);
  if (!names.includes(name)) {
    throw new UsageError(
      `no listener named '${name}' in ${cfg.file}${didYouMean(name, names)}; listeners: ${names.join(', ')}`,
    );
  }
}

function runtimeOptions(values: Values, io: CommandIo, env: NodeJS.ProcessEnv) {
  return {
    env,
    // The daemon says at start that user tools are unsigned; every command saying it again is noise.
    warn: (message: string, code?: string) => {
      if (code !== UNSIGNED_WARNING) io.err(`warning: ${message}`);
    },
    ...(values.root ? { root: values.root } : {}),
  };
}

async function list(values: Values, rest: string[], io: CommandIo): Promise<number> {
  expectArgs('list', rest, 0, '');
  const { config: cfg, env } = await configAndEnv(values);
  if (values.as !== undefined) checkListener(cfg, values.as);
  const runtime = await createToolRuntime({ config: cfg }, runtimeOptions(values, io, env));
  try {
    const notices = runtime.dispatcher.notices();
    const rows =
      values.as === undefined
        ? runtime.registry.list().map((t) => ({
            tool: t.definition.name,
            description: t.definition.description,
            reason: undefined,
            notes: notices
              .filter((n) => n.tool === t.definition.name)
              .map((n) => `${n.listener}: ${n.notice}`),
          }))
        : runtime.dispatcher
            .availability(values.as)
            .map((a) => ({ ...a, notes: a.notice ? [a.notice] : [] }));
    if (rows.length === 0) io.out('(no tools registered)');
    const width = Math.max(0, ...rows.map((r) => r.tool.length));
    for (const row of rows) {
      const mark = row.reason === undefined ? '' : ` [UNAVAILABLE: ${row.reason}]`;
      const warned = row.notes.map((note) => ` [WARNING: ${note}]`).join('');
      io.out(`${row.tool.padEnd(width)}  ${row.description.replace(/\s+/g, ' ').trim()}${mark}${warned}`);
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

function parseScope(text: string | undefined): Capability[] | undefined {
  if (text === undefined) return undefined;
  const caps = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const cap of caps) {
    if (!(CAPABILITIES as readonly string[]).includes(cap)) {
      throw new UsageError(
        `--scope: unknown capability '${cap}'; expected some of ${CAPABILITIES.join(', ')}`,
      );
    }
  }
  return caps as Capability[];
}

async function call(values: Values, rest: string[], io: CommandIo): Promise<number> {
  // The arguments may come as --args JSON or as a second positional word: `tools call calculate '{...}'`.
  if (rest.length === 2 && values.args === undefined) values = { ...values, args: rest.pop() };
  expectArgs('call', rest, 1, 'one tool name (and its arguments as --args JSON)');
  const tool = rest[0] as string;
  if (values.as === undefined)
    throw new UsageError('tools call needs --as LISTENER (whose grants and tool_config apply)');
  let args: unknown = {};
  if (values.args !== undefined) {
    try {
      args = JSON.parse(values.args);
    } catch (error) {
      throw new UsageError(`--args is not valid JSON: ${(error as Error).message}`);
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw new UsageError('--args must be a JSON object, e.g. --args \'{"expression": "2 + 2"}\'');
    }
  }
  const scope = parseScope(values.scope);
  const { config: cfg, env } = await configAndEnv(values);
  if (!values.local) {
    // The running organism's answer, from what it has loaded: the CLI and the daemon agree.
    const through = await daemonFor(values, cfg, env);
    if (through) return callThroughDaemon(through, { tool, as: values.as, args, scope }, io);
  }
  checkListener(cfg, values.as);
  // The call runs here, not in the daemon: the same folders and the same redaction as there.
  await ensureOrganismFolders(cfg);
  knownSecrets.set(`config:${cfg.file}`, await configSecrets(cfg.file, cfg, env));
  // The organism's running daemon is no more a tool's to call from here than from inside it.
  const running = await liveDaemonAddress(cfg.organism.data_dir);
  const apiOwner = {};
  if (running) {
    const url = new URL(running.url);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    ownApi.set(apiOwner, { host: cfg.server.host, port });
  }
  // The workspace on its size-bounded volume for the call, as the daemon has it (shared with a
  // running daemon, unmounted after the call when none is).
  const runtime = await createToolRuntime(
    { config: cfg },
    { ...runtimeOptions(values, io, env), workspaceVolume: true },
  );
  try {
    const result = await runtime.dispatcher.call({
      tool,
      args,
      listener: values.as,
      thread: `cli-${randomUUID()}`,
      ...(scope ? { scope } : {}),
    });
    // As in thread history: a result that carries a secret the organism knows shows it redacted.
    io.out(JSON.stringify(redactKnown(result), null, 2));
    return result.status === 'ok' ? 0 : result.status === 'refused' ? 2 : 1;
  } finally {
    ownApi.delete(apiOwner);
    await runtime.close();
  }
}

/** The daemon to call through: --url or $ORGANISM_URL, else the one running for the config; undefined: none. */
async function daemonFor(
  values: Values,
  cfg: OrganismConfig,
  env: NodeJS.ProcessEnv,
): Promise<DaemonClient | undefined> {
  const named = values.url || env[URL_ENV];
  if (!named && !(await liveDaemonAddress(cfg.organism.data_dir))) return undefined;
  return new DaemonClient(await resolveTarget(values, env));
}

async function callThroughDaemon(
  client: DaemonClient,
  call: { tool: string; as: string; args: unknown; scope: Capability[] | undefined },
  io: CommandIo,
): Promise<number> {
  // A call that needs approval answers once a person decides: say so while it waits.
  const hint = setTimeout(
    () =>
      io.err(
        `waiting for the daemon at ${client.target.url} (a call that needs approval waits for a person: organism approvals list)`,
      ),
    2_000,
  );
  try {
    const answer = await client.post<{ result: ToolResult }>(
      `/api/v1/tools/${encodeURIComponent(call.tool)}/call`,
      { as: call.as, args: call.args, ...(call.scope ? { scope: call.scope } : {}) },
      { untimed: true },
    );
    io.out(JSON.stringify(answer.result, null, 2));
    return answer.result.status === 'ok' ? 0 : answer.result.status === 'refused' ? 2 : 1;
  } finally {
    clearTimeout(hint);
  }
}

async function sign(values: Values, rest: string[], io: CommandIo): Promise<number> {
  expectArgs('sign', rest, 0, '');
  const { config: cfg, env } = await configAndEnv(values);
  const paths = toolPaths(cfg);
  let privateKey: KeyObject;
  if (values.key !== undefined) {
    privateKey = await readPrivateKey(values.key);
  } else {
    const key = await ensureSigningKey(paths.dataDir);
    if (key.created) io.out(`generated a new Ed25519 signing key: ${key.path} (mode 0600)`);
    privateKey = key.privateKey;
  }
  const publicKey = createPublicKey(privateKey);
  // Check every module registers before signing it: a manifest of broken tools helps nobody.
  const root = values.root ?? defaultToolRuntimeOptions().root;
  const catalog = await loadOrganismCatalog(cfg, root);
  const registry = new ToolRegistry();
  for (const entry of catalog) registry.register(entry.definition, { module: entry.module });
  let manifest = buildManifest(
    // A user's tool has its helpers followed within their project, the folder of organism.yaml.
    catalog.map((e) => ({
      name: e.definition.name,
      module: e.module,
      ...(e.user ? { root: dirname(cfg.file) } : {}),
    })),
    privateKey,
    paths.manifest,
    root,
  );
  if (mcpServers(cfg).length > 0) {
    // Each MCP server's tool list (names, descriptions, schemas) is pinned too: src/mcp/client/pins.ts.
    const mcp = await import('../../mcp/client/index.ts');
    const pins = await mcp.collectPins(cfg, env);
    manifest = mcp.withMcpPins(manifest, pins, privateKey);
    for (const [server, tools] of Object.entries(pins))
      io.out(`pinned ${Object.keys(tools).length} tools of MCP server ${server}`);
  }
  await writeManifest(paths.manifest, manifest);
  const der = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const envName = cfg.tools?.public_key_env;
  if (envName) {
    let trusted: KeyObject | undefined;
    try {
      trusted = trustedPublicKey(cfg).key;
    } catch {
      trusted = undefined;
    }
    if (!trusted || keyId(trusted) !== keyId(publicKey)) {
      io.err(
        `warning: ${envName} does not hold this key; set ${envName}=${der} or the runtime will refuse every tool`,
      );
    }
  } else {
    // The runtime trusts this file when tools.public_key_env is not set.
    await mkdir(paths.dataDir, { recursive: true });
    await writeFile(paths.publicKey, publicKey.export({ type: 'spki', format: 'pem' }));
    io.out(`trusted public key: ${paths.publicKey}`);
  }
  io.out(
    `signed ${catalog.length} tool${catalog.length === 1 ? '' : 's'} into ${paths.manifest} (key ${manifest.key_id})`,
  );
  io.out(`public key (base64 SPKI, for tools.public_key_env): ${der}`);
  return 0;
}

async function knownTools(values: Values, cfg: OrganismConfig): Promise<string[]> {
  return (await loadOrganismCatalog(cfg, values.root ?? defaultToolRuntimeOptions().root)).map(
    (e) => e.definition.name,
  );
}

async function revoke(values: Values, rest: string[], io: CommandIo): Promise<number> {
  expectArgs('revoke', rest, 1, 'one tool name');
  const tool = rest[0] as string;
  const reason = values.reason?.trim();
  if (!reason)
    throw new UsageError('tools revoke needs --reason "why" (the reason is shown to every caller refused)');
  const cfg = await config(values);
  const known = await knownTools(values, cfg);
  if (!known.includes(tool)) throw new UsageError(`no tool named '${tool}'${didYouMean(tool, known)}`);
  const path = toolPaths(cfg).revocations;
  await revokeTool(path, tool, reason);
  io.out(`revoked ${tool}: ${reason} (${path}); a running organism picks this up within seconds`);
  if (sharesState(cfg)) {
    // Several daemons on Redis: every one of them refuses it, not just this machine's.
    await revokeShared(cfg, tool, { reason, time: new Date().toISOString() });
    io.out(`revoked ${tool} for every daemon of the organism (redis ${redisAddress(cfg.bus.url!)})`);
  }
  return 0;
}

async function unrevoke(values: Values, rest: string[], io: CommandIo): Promise<number> {
  expectArgs('unrevoke', rest, 1, 'one tool name');
  const tool = rest[0] as string;
  const cfg = await config(values);
  const path = toolPaths(cfg).revocations;
  if (await unrevokeTool(path, tool)) io.out(`unrevoked ${tool} (${path})`);
  else io.out(`${tool} was not revoked (${path})`);
  if (sharesState(cfg) && (await unrevokeShared(cfg, tool))) {
    io.out(`unrevoked ${tool} for every daemon of the organism (redis ${redisAddress(cfg.bus.url!)})`);
  }
  return 0;
}
