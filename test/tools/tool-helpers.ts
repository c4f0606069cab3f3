/**
 * Helpers shared by the native tool tests: a hand-built ToolRunContext for calling a tool's run()
 * directly, a Dispatcher over chosen tools for calling them the way the runtime does, and `caught`.
 */
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import type { OrganismConfig, ToolConfig } from '../../src/config/types.ts';
import { testConfig } from '../../src/testing/index.ts';
import { Dispatcher, type GuardCheck } from '../../src/tools/dispatcher.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { createToolServices } from '../../src/tools/services.ts';
import type { ListenerGrants } from '../../src/tools/tool-config.ts';
import type { ResourceCache, ToolDefinition, ToolRunContext, ToolServices } from '../../src/tools/types.ts';

/** A ResourceCache over a Map; entries given up front are returned instead of being created. */
export function mapResources(
  preset: Record<string, unknown> = {},
): ResourceCache & { closeAll(): Promise<void> } {
  const values = new Map<string, unknown>(Object.entries(preset));
  const closers: (() => void | Promise<void>)[] = [];
  return {
    async get<T>(
      key: string,
      create: () => T | Promise<T>,
      close?: (r: T) => void | Promise<void>,
    ): Promise<T> {
      if (values.has(key)) return values.get(key) as T;
      const made = await create();
      values.set(key, made);
      if (close) closers.push(() => close(made));
      return made;
    },
    async closeAll() {
      for (const c of closers) await c();
    },
  };
}

export interface ContextOptions {
  config?: ToolConfig;
  /** organism.yaml sections (web_search, ...), schema defaults applied; `file` places the file. */
  sections?: Record<string, unknown>;
  /**
   * Sections laid over the config without the schema's check: for testing a tool's own defence
   * against a config the loader would refuse (say, web_search with no url).
   */
  unchecked?: Record<string, unknown>;
  resources?: Record<string, unknown>;
  signal?: AbortSignal;
  callId?: string;
  /** Workspace and data dir of the call; default /tmp. */
  workspace?: string;
}

export function makeContext(options: ContextOptions = {}): ToolRunContext {
  // `file` is where organism.yaml would be: relative paths in the sections resolve against its folder.
  const { file, ...sections } = options.sections ?? {};
  const config = Object.assign(
    testConfig(sections, typeof file === 'string' ? { dir: dirname(file) } : {}),
    options.unchecked,
  );
  const services: ToolServices = { config, resources: mapResources(options.resources) };
  return {
    signal: options.signal ?? new AbortController().signal,
    listener: 'tester',
    thread: 'thread-1',
    callId: options.callId ?? 'call-1',
    config: options.config ?? {},
    timeoutMs: 30_000,
    workspace: options.workspace ?? '/tmp',
    dataDir: options.workspace ?? '/tmp',
    services,
  };
}

/** A guard that allows every call, for tests of what the tools refuse on their own. */
export const allowAll: GuardCheck = () => ({
  verdict: 'allow',
  rule_id: null,
  reason: null,
  suggestion: null,
});

export interface DispatcherSetup {
  tools: ToolDefinition[];
  /** The one listener, with its grants, tool_config and trust. */
  listener: ListenerGrants;
  guard: GuardCheck;
  /** Workspace and data dir; default the OS temp dir. */
  workspace?: string;
  /** The organism config the tool services see; default empty. */
  config?: OrganismConfig;
}

/** A Dispatcher with `tools` registered and one listener, as the runtime would build it. */
export function toolDispatcher(setup: DispatcherSetup): Dispatcher {
  const registry = new ToolRegistry();
  for (const tool of setup.tools) registry.register(tool);
  const workspace = setup.workspace ?? tmpdir();
  return new Dispatcher({
    registry,
    listeners: [setup.listener],
    workspace,
    dataDir: workspace,
    guard: setup.guard,
    services: createToolServices(setup.config ?? testConfig()).services,
  });
}

/** Runs `fn` and returns what it threw (fails the test when it does not throw). */
export async function caught(
  fn: () => Promise<unknown>,
): Promise<Error & { code?: string; details?: Record<string, unknown> }> {
  try {
    await fn();
  } catch (error) {
    return error as Error & { code?: string; details?: Record<string, unknown> };
  }
  throw new Error('expected the call to throw, but it returned');
}
