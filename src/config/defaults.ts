/**
 * What ajv's `default`s cannot do alone: defaults that depend on other keys (`<data_dir>`,
 * `<organism.name>`) and paths made absolute against the config file's folder, so the rest of the
 * runtime never depends on the daemon's working directory.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { DATA_DIR_PLACEHOLDER, ORGANISM_NAME_PLACEHOLDER } from './schema.ts';
import type { OrganismConfig } from './types.ts';

/** Resolves a path from the file against `base`; `<data_dir>/...` is taken under the data dir. */
export function resolveConfigPath(value: string, base: string, dataDir?: string): string {
  if (
    dataDir !== undefined &&
    (value === DATA_DIR_PLACEHOLDER || value.startsWith(`${DATA_DIR_PLACEHOLDER}/`))
  ) {
    return join(dataDir, value.slice(DATA_DIR_PLACEHOLDER.length));
  }
  return isAbsolute(value) ? value : resolve(base, value);
}

/**
 * Turns schema-valid data (ajv defaults already in place) into the OrganismConfig the runtime uses.
 * `base` is the config file's folder; `file` its absolute path. Mutates and returns `data`.
 */
export function finishConfig(data: Record<string, any>, file: string, base: string): OrganismConfig {
  const organism = data.organism;
  organism.data_dir = resolveConfigPath(organism.data_dir, base);
  organism.workspace = resolveConfigPath(organism.workspace, base, organism.data_dir);
  if (data.bus.group === ORGANISM_NAME_PLACEHOLDER) data.bus.group = organism.name;
  if (data.telemetry?.service_name === ORGANISM_NAME_PLACEHOLDER) data.telemetry.service_name = organism.name;
  data.tool_modules = (data.tool_modules ?? []).map((path: string) => resolveConfigPath(path, base));
  for (const key of ['prompt_modules', 'resource_modules'])
    data[key] = (data[key] ?? []).map((path: string) => resolveConfigPath(path, base));
  data.tools.revocations_file = resolveConfigPath(data.tools.revocations_file, base, organism.data_dir);
  data.tools.manifest = resolveConfigPath(data.tools.manifest, base, organism.data_dir);
  data.audit.path = resolveConfigPath(data.audit.path, base, organism.data_dir);
  for (const key of ['key_file', 'checkpoint_dir']) {
    if (typeof data.audit[key] !== 'string') continue;
    const file: string = data.audit[key];
    const home = file === '~' || file.startsWith('~/') ? join(homedir(), file.slice(1)) : file;
    data.audit[key] = resolveConfigPath(home, base, organism.data_dir);
  }
  for (const backend of data.llm.backends) {
    if (typeof backend.script === 'string')
      backend.script = resolveConfigPath(backend.script, base, organism.data_dir);
  }
  for (const listener of data.listeners) {
    if (typeof listener.handler === 'string') listener.handler = resolveConfigPath(listener.handler, base);
    if (typeof listener.llm?.script === 'string')
      listener.llm.script = resolveConfigPath(listener.llm.script, base, organism.data_dir);
  }
  return { file, ...data } as OrganismConfig;
}
