/**
 * The daemon: organism.yaml -> tool runtime -> agents -> history -> bus -> HTTP + WebSocket API.
 * `organism run` and the end-to-end tests start it through here, so both run exactly the same
 * assembly. It also owns what keeps it running for months: hot reload (SIGHUP and POST
 * /organism/reload, see daemon/reload.ts), metrics and live events from the bus hooks, thread
 * history on disk, and a shutdown that drains for at most `bus.drain_timeout_ms`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { type AgentRuntime, attachAgents } from './agent/attach.ts';
import { auditKeyOptions, loadAuditKeys } from './audit/key.ts';
import { AuditLog } from './audit/log.ts';
import type { AuditEntry } from './audit/record.ts';
import { configSecrets, knownSecrets } from './audit/redact.ts';
import { auditCheckpointOptions } from './audit/setup.ts';
import { Bus, type BusHooks } from './bus/bus.ts';
import { HistoryLog, ThreadHistory, toView } from './bus/history/index.ts';
import { Journal } from './bus/journal/journal.ts';
import { within } from './bus/lifecycle.ts';
import { createBusBackend } from './bus/transport/factory.ts';
import { MemoryTransport } from './bus/transport/memory.ts';
import { dataDirIn } from './config/data-dir.ts';
import { loadConfig } from './config/index.ts';
import { readConfig } from './config/load.ts';
import type { OrganismConfig } from './config/types.ts';
import { createDaemonApprovals, recordApprovals, usesApproval } from './daemon/approvals.ts';
import { ensureOrganismFolders } from './daemon/folders.ts';
import { redisExposureWarning } from './daemon/redis-exposure.ts';
import { daemonRuntimeState } from './daemon/runtime-state.ts';
import { createOrganismService } from './daemon/service.ts';
import { RELEASE_TIMEOUT_MS } from './daemon/shutdown.ts';
import { type DaemonState, listenerSpecs, sanitizedConfig } from './daemon/state.ts';
import { auditTee, SwappableTools } from './daemon/tools.ts';
import { applyRunningV8Flags, applyV8Flags } from './daemon/v8-flags.ts';
import { ownApi } from './guard/own-api.ts';
import { createClientChannels } from './mcp/server/client-channel.ts';
import { createLogger } from './observability/logger.ts';
import { metrics, metricsRegistry, recordDelivery } from './observability/metrics.ts';
import { packageFile } from './package-root.ts';
import { closeInheritedFds } from './sandbox/index.ts';
import { claimDataDir, type DataDirClaim } from './server/address-file.ts';
import { Authenticator, assertSafeBind, localCredential } from './server/auth.ts';
import { EventHub } from './server/events.ts';
import { type RunningServer, startHttpServer } from './server/http.ts';
import { ensureLocalToken } from './server/local-token.ts';
import { RateLimiter } from './server/rate-limit.ts';
import type { OrganismService, ReloadReport } from './server/service.ts';
import { startTelemetry, type Telemetry } from './telemetry/index.ts';
import { loadToolCatalog } from './tools/catalog.ts';
import { toolPaths } from './tools/own-files.ts';
import { createToolRuntime, type ToolRuntime } from './tools/runtime.ts';
import { createToolServices, type Resources } from './tools/services.ts';
import { workspaceVolumeFor } from './tools/workspace-volume.ts';

export interface DaemonOptions {
  configPath: string;
  /** Overrides server.port (0 picks a free port). */
  port?: number;
  host?: string;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /** Reload organism.yaml on SIGHUP (default true; close() removes the handler). */
  reloadOnSighup?: boolean;
}

export interface Daemon {
  /** The configuration now in force (a reload replaces it). */
  readonly config: OrganismConfig;
  bus: Bus;
  /** The tool runtime now in force (a reload replaces it). */
  readonly tools: ToolRuntime;
  /** LLM agents: the shared client and token usage per agent and thread (a reload replaces it). */
  readonly agents: AgentRuntime;
  service: OrganismService;
  url: string;
  /** The local API token (admin) and its file, `<data_dir>/api-token`. */
  localToken: { token: string; path: string };
  logger: Logger;
  /** Same as POST /api/v1/organism/reload; throws ConfigError (with every issue) and changes nothing then. */
  reload(by?: string): Promise<ReloadReport>;
  /** Stops the HTTP server, drains the bus within `drainMs`, flushes history and audit, releases everything. */
  close(drainMs?: number): Promise<{ drained: boolean; abandoned: number }>;
}

const VERSION = (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string })
  .version;

/** What a start that fails has to let go of: the tools' resources (the workspace's mount), then the data dir. */
interface Held {
  claim?: DataDirClaim;
  resources?: Resources;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  // The data dir's lock, once taken (below), is let go again when the start fails after that.
  const held: Held = {};
  try {
    return await assembleDaemon(options, held);
  } catch (error) {
    await held.resources?.closeAll();
    await held.claim?.release();
    throw error;
  }
}

async function assembleDaemon(options: DaemonOptions, held: Held): Promise<Daemon> {
  // A second daemon is refused at once: where the data dir exists already (as it does for a daemon
  // running there), its lock is taken before the tools and listeners load; checked again below.
  // organism.yaml is read and parsed once, here: loadConfig goes on from it below.
  const read = await readConfig(options.configPath, { env: options.env ?? process.env }).catch(
    () => undefined, // loadConfig reads it again below and says what is wrong
  );
  const early = read && dataDirIn(read.data, resolve(options.configPath));
  if (early !== undefined && existsSync(early)) held.claim = await claimDataDir(early);
  // Organism's own tools load before the config's listeners: compiling a user's .ts listener turns
  // on source maps for the whole process, and every module loaded after that has its source map
  // read and kept (the tools' dependencies': ~1.3 MB of idle RSS). A failure here is reported
  // where the tools are registered, below, in its place among the config's errors.
  const catalog = await loadToolCatalog().catch(() => undefined);
  const loaded = await loadConfig(options.configPath, {
    env: options.env ?? process.env,
    ...(read ? { read } : {}),
  });
  const { config } = loaded;
  // bin/organism.js started the process favouring memory; speed is set before the bus carries a
  // message, so the code that stays hot is compiled for it (src/daemon/v8-flags.ts).
  if (config.organism.optimize_for === 'speed') applyV8Flags('speed');
  // The process environment over the `.env` beside organism.yaml: what every `*_env` key reads.
  const { env } = loaded;
  // Every secret the config names, known to every redaction point before anything can log it.
  knownSecrets.set(`config:${options.configPath}`, await configSecrets(options.configPath, config, env));
  const logger =
    options.logger ?? createLogger({ level: config.organism.log_level, organism: config.organism.name });
  const listenHost = options.host ?? config.server.host;
  // Before any program starts: fds a launcher left open must not reach them (src/sandbox/fds.ts).
  // Info, not a warning: launchers do this routinely (npm leaves one open), and it is dealt with.
  const inherited = closeInheritedFds();
  if (inherited.length > 0)
    logger.info(
      { component: 'sandbox', fds: inherited },
      `closed ${inherited.length} file descriptor(s) inherited without close-on-exec (${inherited.map((f) => `${f.fd} -> ${f.target}`).join(', ')}): programs the tools start would have got them`,
    );

  const exposure = redisExposureWarning(config);
  if (exposure) logger.warn({ component: 'security' }, exposure);

  // Refused before anything opens a file: an API on the network with no tokens.
  assertSafeBind(listenHost, Authenticator.fromConfig(config.auth, env));

  // A fresh organism has neither folder yet: make them before anything uses them.
  await ensureOrganismFolders(config);
  // One daemon per data dir: a second one is refused before it opens or writes anything there.
  if (held.claim?.dataDir !== config.organism.data_dir) {
    await held.claim?.release();
    held.claim = await claimDataDir(config.organism.data_dir);
  }
  const claim = held.claim;
  const { resources } = createToolServices(config);
  held.resources = resources;
  const warn = (message: string) => logger.warn({ component: 'tools' }, message);
  // The workspace's size bound: mkfs and mount are programs of their own, so the mount goes on
  // while this thread loads the rest. No tool call runs before it is in place (the tool runtime's
  // `ready`), and the bus, which every call and every handler comes through, starts after it.
  const workspaceVolume = workspaceVolumeFor(config, resources, warn);
  workspaceVolume.catch(() => {}); // awaited before the bus starts: a failed mount fails the start
  // The credential of this machine's CLI and dashboard (every route needs one, tokens or not);
  // known to every redaction point before anything could log it.
  const localToken = await ensureLocalToken(config.organism.data_dir);
  knownSecrets.set('local-token', [localToken.token]);
  for (const warning of localToken.warnings) logger.warn({ component: 'server' }, warning);
  const auth = Authenticator.fromConfig(config.auth, env, localCredential(localToken.token));

  const hub = new EventHub();
  // The audit chain's key, from the environment or a file outside data_dir (created at first start).
  const auditKeys = await loadAuditKeys(auditKeyOptions(config, { env, create: true }));
  if (auditKeys) {
    const { source, current, created, warning } = auditKeys;
    // The key never shows up in a log, an answer or the LLM context either.
    knownSecrets.set(
      'audit-key',
      [...auditKeys.keys].map((key) => key.secret.toString('utf8')),
    );
    logger.info(
      { component: 'audit', key_id: current.id, key_source: source },
      created
        ? `created the audit key file ${source} (mode 0600): it seals the audit log and verify needs it; keep it, outside data_dir`
        : `audit log sealed with key ${current.id} from ${source}`,
    );
    if (warning) logger.warn({ component: 'audit' }, warning);
  }
  const auditLog = new AuditLog({
    path: toolPaths(config).audit,
    keys: auditKeys,
    // A change of the log under its writer is an attack on the record: logged at error.
    checkpoints: auditCheckpointOptions(config, {
      env,
      report: (level, message) => logger[level]({ component: 'audit' }, message),
    }),
  });
  // Checked against its last checkpoint before the first call, so a cut while stopped is found now.
  await auditLog.open();
  const auditSink = auditTee(auditLog, (entry) => observeAudit(hub, entry));
  // One approval gate for the daemon's life: a call waiting for a person outlives a reload.
  // Approvals and once-only effects: apart from every tool's reach, sealed, forgeries audited.
  const runtimeState = daemonRuntimeState({ config, keys: auditKeys, audit: auditSink, logger, resources });
  const approvals = createDaemonApprovals({ state: runtimeState, audit: auditSink });
  // The MCP clients that started calls, by thread: the server binds them, agents and approvals ask.
  const clientChannels = createClientChannels();
  const runtime = await createToolRuntime(loaded, {
    workspaceVolume,
    ...(catalog ? { catalog } : {}),
    audit: auditSink,
    services: { config, resources, env },
    env,
    warn,
    approvals,
  }).catch(async (error: unknown) => {
    await resources.closeAll();
    await auditLog.close();
    throw error;
  });
  const tools = new SwappableTools(runtime, resources, warn, clientChannels);

  const releaseEarly = async () => {
    await tools.close();
    await auditLog.close();
  };
  // Agents (agent: true, no handler) get their LLM loop as their definition before the bus is built.
  const agents = await attachAgents(loaded, {
    logger: logger.child({ component: 'agents' }),
    env,
    // Called from deliveries only, so after `bus` and `history` exist, and before `state` may:
    // the journal's recovered messages are delivered as soon as the bus starts.
    history: (thread) => bus.thread(thread)?.messages,
    // Each model turn into the thread, so an agent's task resumes after a restart.
    record: (thread, entry) => history.append(thread, entry),
    tools: (name) => tools.runtime.registry.get(name)?.definition,
    clientChannels,
  }).catch(async (error: unknown) => {
    await releaseEarly();
    throw error;
  });

  const history = new ThreadHistory({
    maxPerThread: config.limits.max_history_per_thread,
    maxThreads: config.history.max_threads,
  });
  let historyLog: HistoryLog | undefined;
  if (config.history.max_bytes > 0) {
    try {
      historyLog = await HistoryLog.open({
        dir: join(config.organism.data_dir, 'history'),
        maxBytes: config.history.max_bytes,
        onError: (message) => logger.error({ component: 'history' }, message),
      });
      const replayed = await historyLog.replay(history);
      historyLog.attach(history);
      logger.info(
        { ...replayed, threads: history.threadCount, dir: historyLog.dir },
        'thread history loaded',
      );
    } catch (error) {
      await historyLog?.close().catch(() => {});
      await releaseEarly();
      throw error;
    }
  }
  // Every recorded message to the live stream, built only while someone is listening.
  history.subscribe((thread, entry) => {
    if (hub.size > 0) hub.publish({ type: 'message', kind: entry.kind, thread, message: toView(entry) });
  });
  // Approvals asked and decided: records in their threads and events on the stream.
  recordApprovals(approvals, history, hub);

  const hooks: BusHooks = {
    delivered: recordDelivery,
    thread: (thread, event) => {
      if (event === 'started') metrics.threadsStarted.inc();
      hub.lifecycle(`thread.${event}`, { thread });
      // A stopped thread's calls must not run when someone approves them later.
      if (event === 'stopped' && usesApproval(tools.runtime.services.config))
        void approvals.denyThread(thread, 'its thread was stopped').catch(() => {});
    },
  };
  // Tracing: loaded only with a `telemetry:` section (nothing of OpenTelemetry is imported without).
  let telemetry: Telemetry | undefined;
  try {
    telemetry = await startTelemetry(config.telemetry, {
      env,
      version: VERSION,
      hooks: {
        dropped: (reason, count) => metrics.traceSpansDropped.inc({ reason }, count),
        exported: (count) => metrics.traceSpansExported.inc(count),
        exportError: (message) =>
          logger.warn(
            { component: 'telemetry', err: message },
            'trace export failed; spans are dropped (counted in organism_trace_spans_dropped_total) until the collector answers',
          ),
      },
    });
  } catch (error) {
    await historyLog?.close().catch(() => {});
    await releaseEarly();
    throw error;
  }
  if (telemetry && config.telemetry)
    logger.info(
      {
        component: 'telemetry',
        endpoint: telemetry.endpoint,
        sample_ratio: config.telemetry.sample_ratio,
        capture_content: config.telemetry.capture_content,
      },
      `tracing: spans exported to ${telemetry.endpoint}`,
    );
  // bus.transport: memory (one daemon) or redis (several daemons sharing this organism).
  const backend = await createBusBackend(config, logger, {
    metrics: metricsRegistry,
    closeTimeoutMs: RELEASE_TIMEOUT_MS,
  });
  // One daemon: a journaled memory transport, so accepted work survives a crash (invariant 9).
  if (backend.transport instanceof MemoryTransport) {
    try {
      const journal = await Journal.open({
        dir: join(config.organism.data_dir, 'journal'),
        fsync: config.durability.fsync,
        onError: (message) => logger.error({ component: 'journal' }, message),
      });
      const read = journal.report;
      // Every segment left by an earlier run is taken over (this daemon holds the data dir's lock),
      // and an operator sees what was found in it.
      if (read.segments > 0)
        logger.info(
          { component: 'journal', ...read, files: journal.takenOver.slice(0, 20) },
          `journal: recovered ${read.segments} segment(s) of earlier runs: ${read.pending} of ${read.accepted} accepted message(s) never handled, to run again`,
        );
      if (read.torn > 0 || read.corrupt > 0)
        logger.warn({ component: 'journal', ...read }, 'journal: skipped lines that did not parse');
      backend.transport = new MemoryTransport({ journal });
    } catch (error) {
      await backend.close();
      await historyLog?.close().catch(() => {});
      await releaseEarly();
      throw error;
    }
  }
  const bus = new Bus(listenerSpecs(loaded), backend.transport, {
    threadStore: backend.threadStore,
    limits: config.limits,
    bus: config.bus,
    logger,
    tools,
    history,
    hooks,
    ...(telemetry ? { tracing: telemetry.tracing } : {}),
  });
  try {
    await workspaceVolume;
  } catch (error) {
    await backend.close();
    await within(telemetry?.shutdown() ?? Promise.resolve(), RELEASE_TIMEOUT_MS);
    await historyLog?.close().catch(() => {});
    await releaseEarly();
    throw error;
  }
  bus.start();
  // Accepted and never handled before the last stop: queued again before any new work.
  const recovered = bus.recover();
  if (recovered.recovered + recovered.dropped > 0)
    logger.info({ component: 'journal', ...recovered }, 'journal: unfinished messages queued again');

  let server: RunningServer | undefined;
  const state: DaemonState = {
    configPath: options.configPath,
    // Without the .env: a reload reads that file again (loaded.env has it merged in).
    env: options.env ?? process.env,
    loaded,
    config,
    sanitized: await sanitizedConfig(config),
    logger,
    bus,
    tools,
    resources,
    agents,
    auditLog,
    auditSink,
    history,
    historyLog,
    hub,
    approvals,
    clientChannels,
    redisBus: backend.redis,
    auth,
    injectLimiter: new RateLimiter({
      perSecond: config.server.inject_per_second,
      burst: config.server.inject_burst,
    }),
    listenHost,
    started: Date.now(),
    version: VERSION,
    reloads: { applied: 0, refused: 0, last: null },
    reloading: false,
    stopping: false,
    streamClients: () => server?.stream.clients ?? 0,
  };
  const current = state;
  const service = createOrganismService(current);
  try {
    server = await startHttpServer(service, {
      host: listenHost,
      port: options.port ?? config.server.port,
      // The JSON wrapping and escaping of a payload can roughly double it.
      maxBodyBytes: config.limits.max_message_bytes * 2 + 4096,
      logger,
      auth: () => current.auth,
      injectLimiter: () => current.injectLimiter,
      dashboard: config.server.dashboard,
    });
  } catch (error) {
    await bus.stop(0);
    await backend.close();
    await within(telemetry?.shutdown() ?? Promise.resolve(), RELEASE_TIMEOUT_MS);
    await historyLog?.close().catch(() => {});
    await releaseEarly();
    throw error;
  }
  const running = server;
  // No tool may call this API, whatever its grants (the web guard and MCP HTTP servers check it).
  const apiOwner = {};
  ownApi.set(apiOwner, { host: listenHost, port: running.port });
  // Where the CLI finds this daemon (`organism status` after `run --port 0`); removed at close.
  await claim
    .listening(running.url)
    .catch((error: unknown) =>
      logger.warn({ err: error }, 'could not write the daemon address file; the CLI needs --url'),
    );

  const onSighup = () => {
    service.reload('sighup').then(
      () => {},
      // Logged (with every issue) by the reload itself; the running organism is unchanged.
      () => {},
    );
  };
  if (options.reloadOnSighup ?? true) process.on('SIGHUP', onSighup);

  logger.info(
    { url: running.url, listeners: bus.listeners().length, auth: auth.enabled, version: VERSION },
    'organism running',
  );
  // Start-up is over: what runs from here on is tiered up as V8 would (src/daemon/v8-flags.ts).
  applyRunningV8Flags();
  let closing: Promise<{ drained: boolean; abandoned: number }> | undefined;
  return {
    get config() {
      return current.config;
    },
    bus,
    get tools() {
      return current.tools.runtime;
    },
    get agents() {
      return current.agents;
    },
    service,
    url: running.url,
    localToken: { token: localToken.token, path: localToken.path },
    logger,
    reload: (by = 'api') => service.reload(by),
    close(drainMs) {
      closing ??= (async () => {
        process.off('SIGHUP', onSighup);
        current.stopping = true;
        hub.lifecycle('organism.stopping');
        // Every step has a deadline, so a Redis that is away or frozen cannot hold the shutdown
        // past drain_timeout_ms + 2 s (daemon/shutdown.ts); what is not acknowledged by then
        // stays in Redis for another daemon.
        await within(running.close(), RELEASE_TIMEOUT_MS);
        ownApi.delete(apiOwner);
        await claim.unlisten().catch(() => {});
        const result = await bus.stop(drainMs);
        await within(backend.close(), RELEASE_TIMEOUT_MS);
        // The last spans go to the collector, for at most as long as the other releases.
        await within(telemetry?.shutdown() ?? Promise.resolve(), RELEASE_TIMEOUT_MS);
        await within(current.tools.close(), RELEASE_TIMEOUT_MS);
        await historyLog
          ?.close()
          .catch((error: unknown) => logger.error({ err: error }, 'history did not flush'));
        await auditLog
          .close()
          .catch((error: unknown) => logger.error({ err: error }, 'audit log did not flush'));
        logger.info(result, 'organism stopped');
        return result;
        // The data dir is let go last, after everything in it is closed, however the steps went.
      })().finally(() => claim.release());
      return closing;
    },
  };
}

/** Tool calls to metrics (by tool, verdict, outcome) and to the live stream. */
function observeAudit(hub: EventHub, entry: AuditEntry): void {
  if (entry.type !== 'call') return;
  // A name no tool has (an agent's guess) is not a label value: series must stay bounded.
  const tool = entry.code === 'ToolNotFound' ? 'unknown' : entry.tool;
  metrics.toolCalls.inc({ tool, verdict: entry.verdict ?? 'none', outcome: entry.outcome });
  if (hub.size === 0) return;
  hub.publish({
    type: 'tool',
    kind: 'tool',
    thread: entry.thread,
    listener: entry.listener,
    tool: entry.tool,
    call_id: entry.call_id,
    verdict: entry.verdict,
    rule_id: entry.rule_id,
    reason: entry.reason,
    outcome: entry.outcome,
    code: entry.code,
    duration_ms: entry.duration_ms,
    time: entry.time,
  });
}
