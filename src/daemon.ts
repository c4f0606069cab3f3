/**
 * The daemon: organism.yaml -> listeners -> tool runtime -> bus -> HTTP API. `organism run` and the
 * end-to-end tests start it through here, so both run exactly the same assembly.
 */
import pino, { type Logger } from 'pino';
import { type AgentRuntime, attachAgents } from './agent/attach.ts';
import { Bus } from './bus/bus.ts';
import type { ListenerSpec } from './bus/listeners.ts';
import { MemoryTransport } from './bus/memory-transport.ts';
import { type LoadedOrganism, loadConfig } from './config/index.ts';
import type { OrganismConfig } from './config/types.ts';
import { type RunningServer, startHttpServer } from './server/http.ts';
import { createToolRuntime, type ToolRuntime } from './tools/runtime.ts';

export interface DaemonOptions {
  configPath: string;
  /** Overrides server.port (0 picks a free port). */
  port?: number;
  host?: string;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
}

export interface Daemon {
  config: OrganismConfig;
  bus: Bus;
  tools: ToolRuntime;
  /** LLM agents: the shared client and token usage per agent and thread. */
  agents: AgentRuntime;
  url: string;
  logger: Logger;
  /** Stops the HTTP server, drains the bus within `drainMs`, releases everything. */
  close(drainMs?: number): Promise<{ drained: boolean; abandoned: number }>;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const loaded = await loadConfig(options.configPath, { env: options.env });
  const { config } = loaded;
  const logger =
    options.logger ?? pino({ level: config.organism.log_level, base: { organism: config.organism.name } });
  const tools: ToolRuntime = await createToolRuntime(loaded, {
    warn: (message) => logger.warn({ component: 'tools' }, message),
  });
  // Agents (agent: true, no handler) get their LLM loop as their definition before the bus is built.
  const agents = await attachAgents(loaded, {
    logger: logger.child({ component: 'agents' }),
    env: options.env ?? process.env,
    history: (thread) => bus.thread(thread)?.messages,
    tools: (name) => tools.registry.get(name)?.definition,
  }).catch(async (error: unknown) => {
    await tools.close();
    throw error;
  });
  const bus = new Bus(listenerSpecs(loaded), new MemoryTransport(), {
    limits: config.limits,
    bus: config.bus,
    logger,
    tools: tools.dispatcher,
  });
  bus.start();
  let server: RunningServer;
  try {
    server = await startHttpServer(bus, {
      host: options.host ?? config.server.host,
      port: options.port ?? config.server.port,
      // The JSON wrapping and escaping of a payload can roughly double it.
      maxBodyBytes: config.limits.max_message_bytes * 2 + 4096,
      logger,
    });
  } catch (error) {
    await bus.stop(0);
    await tools.close();
    throw error;
  }
  logger.info({ url: server.url, listeners: bus.listeners().length }, 'organism running');
  return {
    config,
    bus,
    tools,
    agents,
    url: server.url,
    logger,
    async close(drainMs) {
      await server.close();
      const result = await bus.stop(drainMs);
      await tools.close();
      logger.info(result, 'organism stopped');
      return result;
    },
  };
}

function listenerSpecs(loaded: LoadedOrganism): ListenerSpec[] {
  const specs: ListenerSpec[] = [];
  for (const listener of loaded.listeners) {
    if (listener.definition)
      specs.push({ config: listener.config, definition: listener.definition, tag: listener.tag });
  }
  return specs;
}
