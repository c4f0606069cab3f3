/**
 * ToolServices for one organism: the config, and a cache of long-lived clients (Redis connection,
 * SMTP transport, librarian backend) created on first use and closed, newest first, at shutdown.
 */
import type { OrganismConfig } from '../config/types.ts';
import type { ResourceCache, ToolServices } from './types.ts';

interface Entry {
  value: Promise<unknown>;
  close?: (resource: unknown) => void | Promise<void>;
}

export class Resources implements ResourceCache {
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  get<T>(
    key: string,
    create: () => T | Promise<T>,
    close?: (resource: T) => void | Promise<void>,
  ): Promise<T> {
    if (this.#closed)
      return Promise.reject(new Error(`resource ${key} requested after the tool runtime closed`));
    const existing = this.#entries.get(key);
    if (existing) return existing.value as Promise<T>;
    const value = (async () => create())();
    const entry: Entry = { value };
    if (close) entry.close = close as Entry['close'];
    this.#entries.set(key, entry);
    // A failed creation is forgotten, so the next call tries again (say, Redis came back).
    value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    return value;
  }

  /** Closes every resource created so far, newest first; returns the failures as messages. */
  async closeAll(): Promise<string[]> {
    this.#closed = true;
    const failures: string[] = [];
    for (const [key, entry] of [...this.#entries].reverse()) {
      this.#entries.delete(key);
      try {
        const resource = await entry.value;
        await entry.close?.(resource);
      } catch (error) {
        failures.push(`${key}: ${(error as Error).message}`);
      }
    }
    return failures;
  }
}

export function createToolServices(
  config: OrganismConfig,
  env?: NodeJS.ProcessEnv,
): { services: ToolServices; resources: Resources } {
  const resources = new Resources();
  return { services: env === undefined ? { config, resources } : { config, resources, env }, resources };
}
