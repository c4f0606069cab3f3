/**
 * Hot reload (SIGHUP or POST /api/v1/organism/reload). Everything that can fail happens first,
 * against the new file, with nothing of the running organism touched: load and validate
 * organism.yaml, read the auth tokens, build the tool runtime (which checks every grant and
 * tool_config), give agents their definitions, compile the listeners. Only then is the change
 * applied, in one synchronous step on the bus (Bus.reconfigure: queued and running messages are
 * kept), and recorded: one audit record per listener added, removed or replaced.
 *
 * What a reload cannot change while running (the address, the transport, limits, the data folder)
 * is listed in `restart_required` and left as it was.
 */
import { attachAgents } from '../agent/attach.ts';
import { configSecrets, knownSecrets } from '../audit/redact.ts';
import type { LoadedOrganism } from '../config/index.ts';
import { loadConfig } from '../config/index.ts';
import { positionIssues } from '../config/issue-position.ts';
import type { OrganismConfig } from '../config/types.ts';
import { ConfigError, OrganismError, ReloadError, ShuttingDownError } from '../errors.ts';
import { metrics } from '../observability/metrics.ts';
import { Authenticator, isLoopbackHost } from '../server/auth.ts';
import { RateLimiter } from '../server/rate-limit.ts';
import type { ReloadReport } from '../server/service.ts';
import { createToolRuntime } from '../tools/runtime.ts';
import { createToolServices, type Resources } from '../tools/services.ts';
import { auditChange, type DaemonState, listenerSpecs, sanitizedConfig } from './state.ts';

/** Settings read once at start; a change to them is reported, not applied. */
const RESTART_ONLY: ReadonlyArray<[string, (c: OrganismConfig) => unknown]> = [
  ['server.host', (c) => c.server.host],
  ['server.port', (c) => c.server.port],
  ['server.dashboard', (c) => c.server.dashboard],
  ['organism.name', (c) => c.organism.name],
  ['organism.data_dir', (c) => c.organism.data_dir],
  ['organism.optimize_for', (c) => c.organism.optimize_for],
  ['audit.path', (c) => c.audit.path],
  ['audit.key_env', (c) => c.audit.key_env],
  ['audit.key_file', (c) => c.audit.key_file],
  ['bus', (c) => c.bus],
  ['limits', (c) => c.limits],
  ['history', (c) => c.history],
  ['durability', (c) => c.durability],
  ['telemetry', (c) => c.telemetry],
];

/** Sections the tool services' long-lived clients are built from: unchanged, the clients are kept. */
const SERVICE_SECTIONS: ReadonlyArray<(c: OrganismConfig) => unknown> = [
  (c) => c.kv,
  (c) => c.smtp,
  (c) => c.web_search,
  (c) => c.librarian,
  (c) => c.tools,
  (c) => c.organism.workspace,
  (c) => c.organism.data_dir,
];

export async function reloadOrganism(state: DaemonState, by: string): Promise<ReloadReport> {
  if (state.reloading)
    throw new ReloadError('reload.in_progress', 'a reload is already running; try again when it ends');
  if (state.stopping) throw new ShuttingDownError();
  state.reloading = true;
  try {
    const report = await prepareAndApply(state, by);
    state.reloads.applied++;
    state.reloads.last = report.time;
    metrics.reloads.inc({ result: 'applied' });
    // pino stamps the line with its own `time`; the report's would be a second `time` key.
    const { time: _reportTime, ...logged } = report;
    state.logger.info(logged, 'organism reloaded');
    return report;
  } catch (thrown) {
    // Issues found past the file's parse (a grant, a tool_config key) get their file:line:column too.
    const error =
      thrown instanceof ConfigError
        ? new ConfigError(await positionIssues(thrown.issues, state.configPath))
        : thrown;
    state.reloads.refused++;
    metrics.reloads.inc({ result: 'refused' });
    const detail = error instanceof OrganismError ? error.message.split('\n')[0]! : 'internal error';
    auditChange(state, 'organism.reload_refused', by, { detail });
    state.hub.lifecycle('organism.reload_refused', { by, detail });
    state.logger.error(
      {
        by,
        issues: error instanceof ConfigError ? error.issues : undefined,
        err: error instanceof ConfigError ? undefined : error,
      },
      'reload refused; the running organism is unchanged',
    );
    throw error;
  } finally {
    state.reloading = false;
  }
}

async function prepareAndApply(state: DaemonState, by: string): Promise<ReloadReport> {
  const old = state.config;
  const loaded = await loadConfig(state.configPath, { env: state.env });
  const config = loaded.config;
  const secrets = await configSecrets(state.configPath, config, loaded.env);

  let auth: Authenticator;
  try {
    // The local token is the data dir's, not organism.yaml's: it stays.
    auth = Authenticator.fromConfig(config.auth, loaded.env, state.auth.local);
  } catch (error) {
    throw new ConfigError([{ file: config.file, path: 'auth.tokens', message: (error as Error).message }]);
  }
  if (!isLoopbackHost(state.listenHost) && !auth.enabled) {
    throw new ConfigError([
      {
        file: config.file,
        path: 'auth.tokens',
        message: `the API listens on ${state.listenHost}; removing every token would open it to the network`,
      },
    ]);
  }

  const shareResources = SERVICE_SECTIONS.every((pick) => same(pick(old), pick(config)));
  const resources: Resources = shareResources ? state.resources : createToolServices(config).resources;
  const discard = async () => {
    if (!shareResources) await resources.closeAll();
  };
  let tools: Awaited<ReturnType<typeof createToolRuntime>>;
  try {
    tools = await createToolRuntime(loaded, {
      // A workspace moved, or newly written to, is bounded from this reload on.
      workspaceVolume: true,
      audit: state.auditSink,
      services: { config, resources, env: loaded.env },
      env: loaded.env,
      warn: (message) => state.logger.warn({ component: 'tools' }, message),
      approvals: state.approvals,
    });
  } catch (error) {
    await discard();
    throw error;
  }
  let agents: Awaited<ReturnType<typeof attachAgents>>;
  let bus: ReturnType<DaemonState['bus']['reconfigure']>;
  try {
    agents = await attachAgents(loaded, {
      logger: state.logger.child({ component: 'agents' }),
      env: loaded.env,
      history: (thread) => state.bus.thread(thread)?.messages,
      record: (thread, entry) => state.history.append(thread, entry),
      tools: (name) => tools.registry.get(name)?.definition,
      clientChannels: state.clientChannels,
    });
    const sanitized = await sanitizedConfig(config);
    // The one step that changes the running organism; it either fully happens or throws unchanged.
    bus = state.bus.reconfigure(listenerSpecs(loaded));
    state.sanitized = sanitized;
  } catch (error) {
    await tools.close().catch(() => {});
    await discard();
    throw error;
  }

  state.tools.swap(tools, resources);
  state.resources = resources;
  state.agents = agents;
  commit(state, loaded, auth);
  knownSecrets.set(`config:${state.configPath}`, secrets);

  const time = new Date().toISOString();
  for (const [action, names] of [
    ['listener.added', bus.added],
    ['listener.removed', bus.removed],
    ['listener.replaced', bus.replaced],
  ] as const) {
    for (const listener of names) {
      auditChange(state, action, by, { listener });
      state.hub.lifecycle(action, { listener, by });
    }
  }
  const restart = RESTART_ONLY.filter(([, pick]) => !same(pick(old), pick(config))).map(([path]) => path);
  const summary = `added ${bus.added.length}, removed ${bus.removed.length}, replaced ${bus.replaced.length}`;
  auditChange(state, 'organism.reloaded', by, {
    detail: restart.length > 0 ? `${summary}; restart required for ${restart.join(', ')}` : summary,
  });
  state.hub.lifecycle('organism.reloaded', { by, detail: summary });
  return { status: 'reloaded', by, time, ...bus, restart_required: restart };
}

/** The new file's settings that apply while running. */
function commit(state: DaemonState, loaded: LoadedOrganism, auth: Authenticator): void {
  const { config } = loaded;
  state.loaded = loaded;
  state.config = config;
  state.auth = auth;
  state.injectLimiter = new RateLimiter({
    perSecond: config.server.inject_per_second,
    burst: config.server.inject_burst,
  });
  state.logger.level = config.organism.log_level;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
