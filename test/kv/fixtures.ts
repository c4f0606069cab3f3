/**
 * Shared test fixtures for the kv store and the key_value_* / send_email tools: temp folders, a
 * minimal organism config, and a tool run context whose resource cache closes what it opened.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { OrganismConfig } from '../../src/config/types.ts';
import { type TestConfigInput, testConfig } from '../../src/testing/index.ts';
import type { ResourceCache, ToolConfig, ToolRunContext, ToolServices } from '../../src/tools/types.ts';

const dirs: string[] = [];

export async function tempDir(prefix = 'organism-kv-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** An organism whose data dir and workspace are `dataDir`, with `sections` (kv, smtp...) and the schema's defaults. */
export function configIn(dataDir: string, sections: TestConfigInput = {}): OrganismConfig {
  return testConfig({ ...sections, organism: { data_dir: dataDir, workspace: dataDir } }, { dir: dataDir });
}

export interface TestServices extends ToolServices {
  /** Closes every resource in reverse order of creation, as the runtime does at shutdown. */
  closeAll(): Promise<void>;
}

export function testServices(config: OrganismConfig): TestServices {
  const cache = new Map<string, Promise<unknown>>();
  const closers: (() => unknown)[] = [];
  const resources: ResourceCache = {
    get<T>(key: string, create: () => T | Promise<T>, close?: (r: T) => void | Promise<void>): Promise<T> {
      let entry = cache.get(key) as Promise<T> | undefined;
      if (!entry) {
        entry = Promise.resolve().then(create);
        cache.set(key, entry);
        entry.then(
          (r) => close && closers.push(() => close(r)),
          () => cache.delete(key),
        );
      }
      return entry;
    },
  };
  return {
    config,
    resources,
    async closeAll() {
      await Promise.all([...cache.values()].map((p) => p.catch(() => {})));
      for (const close of closers.splice(0).reverse()) await close();
      cache.clear();
    },
  };
}

export function toolContext(
  services: ToolServices,
  options: { listener?: string; config?: ToolConfig; callId?: string; signal?: AbortSignal } = {},
): ToolRunContext {
  const dataDir = services.config.organism.data_dir;
  return {
    signal: options.signal ?? new AbortController().signal,
    listener: options.listener ?? 'alice',
    thread: 'thread-1',
    callId: options.callId ?? 'call-1',
    config: options.config ?? {},
    timeoutMs: 30_000,
    workspace: dataDir,
    dataDir,
    services,
  };
}
