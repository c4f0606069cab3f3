/**
 * The project's own prompts and resources: the modules `prompt_modules` and `resource_modules` name
 * (folders: every module file in them, sorted; or single files), loaded as tool modules are (from
 * source, never a compiled cache), checked, and kept per loaded config: a reload brings a new
 * config and so a fresh load, and the previous modules' watchers are stopped.
 */
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { type ConfigIssue, FeatureModuleError } from '../../../errors.ts';
import { defaultExport, importUserModule } from '../../../listener/import-module.ts';
import { moduleFilesOf } from '../../../tools/catalog.ts';
import type { ResourceChanged } from '../subscriptions.ts';
import type { PromptDefinition, ResourceDefinition } from './define.ts';

export interface ProjectResource {
  definition: ResourceDefinition;
  /** Parsed uriTemplate (templates only). */
  template?: UriTemplate;
  module: string;
}

export interface ProjectFeatures {
  prompts: ReadonlyMap<string, { definition: PromptDefinition; module: string }>;
  resources: readonly ProjectResource[];
}

export interface FeatureModulesConfig {
  prompt_modules?: readonly string[];
  resource_modules?: readonly string[];
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

function moduleFiles(entries: readonly string[], key: string): Promise<string[]> {
  return moduleFilesOf(entries, key, (entry, why) => new FeatureModuleError(entry, why));
}

async function exported(file: string, what: string, accept: (v: unknown) => boolean): Promise<unknown[]> {
  let mod: Record<string, unknown>;
  try {
    mod = await importUserModule(file, { cache: false });
  } catch (error) {
    throw new FeatureModuleError(file, `does not load: ${(error as Error).message}`);
  }
  const value = defaultExport(mod, (v) => Array.isArray(v) || accept(v));
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  if (list.length === 0)
    throw new FeatureModuleError(file, `has no default export; export a ${what} or an array of them`);
  return list;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function checkPrompt(p: unknown, at: string): asserts p is PromptDefinition {
  if (!isObject(p) || typeof p.get !== 'function')
    throw new FeatureModuleError(
      at,
      'default export is not a prompt (definePrompt({ name, description, get }))',
    );
  if (typeof p.name !== 'string' || !NAME.test(p.name))
    throw new FeatureModuleError(
      at,
      `prompt name ${JSON.stringify(p.name)} must be 1-128 letters, digits, _ . -`,
    );
  if (typeof p.description !== 'string')
    throw new FeatureModuleError(at, `prompt ${p.name}: description must be a string`);
  if (p.arguments !== undefined) {
    if (!Array.isArray(p.arguments))
      throw new FeatureModuleError(at, `prompt ${p.name}: arguments must be an array`);
    const seen = new Set<string>();
    for (const [i, a] of p.arguments.entries()) {
      if (!isObject(a) || typeof a.name !== 'string' || a.name === '')
        throw new FeatureModuleError(at, `prompt ${p.name}: arguments[${i}] needs a name`);
      if (seen.has(a.name))
        throw new FeatureModuleError(at, `prompt ${p.name}: argument ${a.name} is given twice`);
      seen.add(a.name);
      if (a.complete !== undefined && typeof a.complete !== 'function')
        throw new FeatureModuleError(at, `prompt ${p.name}: arguments[${i}].complete must be a function`);
    }
  }
}

function checkResource(r: unknown, at: string): ProjectResource {
  if (!isObject(r) || typeof r.read !== 'function')
    throw new FeatureModuleError(
      at,
      'default export is not a resource (defineResource({ uri | uriTemplate, name, read }))',
    );
  if (typeof r.name !== 'string' || r.name === '')
    throw new FeatureModuleError(at, 'a resource needs a name');
  const hasUri = typeof r.uri === 'string';
  const hasTemplate = typeof r.uriTemplate === 'string';
  if (hasUri === hasTemplate)
    throw new FeatureModuleError(at, `resource ${r.name}: give exactly one of uri and uriTemplate`);
  const definition = r as unknown as ResourceDefinition;
  if (hasUri) {
    if (!URL.canParse(r.uri as string))
      throw new FeatureModuleError(at, `resource ${r.name}: uri ${r.uri} is not a URI`);
    return { definition, module: at };
  }
  let template: UriTemplate;
  try {
    template = new UriTemplate(r.uriTemplate as string);
  } catch (error) {
    throw new FeatureModuleError(
      at,
      `resource ${r.name}: uriTemplate ${r.uriTemplate}: ${(error as Error).message}`,
    );
  }
  if (template.variableNames.length === 0)
    throw new FeatureModuleError(
      at,
      `resource ${r.name}: uriTemplate ${r.uriTemplate} has no {variable}; use uri`,
    );
  return { definition, template, module: at };
}

/** Loads and checks every module; throws FeatureModuleError naming the module and what is wrong. */
export async function loadFeatureModules(config: FeatureModulesConfig): Promise<ProjectFeatures> {
  const prompts = new Map<string, { definition: PromptDefinition; module: string }>();
  for (const file of await moduleFiles(config.prompt_modules ?? [], 'prompt_modules')) {
    for (const p of await exported(file, 'prompt', (v) => isObject(v) && typeof v.get === 'function')) {
      checkPrompt(p, file);
      const other = prompts.get(p.name);
      if (other) throw new FeatureModuleError(file, `prompt ${p.name} is also declared in ${other.module}`);
      prompts.set(p.name, { definition: p, module: file });
    }
  }
  const resources: ProjectResource[] = [];
  for (const file of await moduleFiles(config.resource_modules ?? [], 'resource_modules')) {
    for (const r of await exported(file, 'resource', (v) => isObject(v) && typeof v.read === 'function')) {
      const resource = checkResource(r, file);
      const key = resource.definition.uri ?? resource.definition.uriTemplate;
      const other = resources.find((o) => (o.definition.uri ?? o.definition.uriTemplate) === key);
      if (other) throw new FeatureModuleError(file, `resource ${key} is also declared in ${other.module}`);
      resources.push(resource);
    }
  }
  return { prompts, resources };
}

interface Loaded {
  config: object;
  features: Promise<ProjectFeatures>;
  stops: Array<() => void>;
}
/** By owner (the daemon's MCP host): several daemons in one process keep theirs apart. */
const current = new WeakMap<object, Loaded>();

/**
 * The features of `config`, loaded on first use and kept until another config (a reload) asks for
 * the same `owner`; then the old modules' watchers stop and the new ones start, telling `changed`.
 */
export function projectFeatures(
  owner: object,
  config: FeatureModulesConfig & object,
  changed?: ResourceChanged,
): Promise<ProjectFeatures> {
  const previous = current.get(owner);
  if (previous?.config === config) return previous.features;
  for (const stop of previous?.stops ?? []) stop();
  const loaded: Loaded = { config, features: loadFeatureModules(config), stops: [] };
  current.set(owner, loaded);
  const live = () => current.get(owner) === loaded;
  loaded.features.then(
    (features) => {
      if (!live()) return;
      for (const { definition } of features.resources) {
        if (typeof definition.watch !== 'function') continue;
        const own = definition.uri;
        try {
          const stop = definition.watch((uri) => {
            const which = uri ?? own;
            if (which !== undefined && live()) changed?.(which);
          });
          if (typeof stop === 'function') loaded.stops.push(stop);
        } catch {
          // A watcher that fails to start leaves the resource readable, only never told.
        }
      }
    },
    () => {
      // The error reaches whoever asks for the features (the request that needs them).
    },
  );
  return loaded.features;
}

/** Stops `owner`'s watchers (a daemon closing: a project's timer must not keep the process alive). */
export function stopProjectFeatures(owner: object): void {
  const loaded = current.get(owner);
  current.delete(owner);
  for (const stop of loaded?.stops ?? []) stop();
}

/**
 * `organism validate`'s check of prompt_modules and resource_modules: each entry loaded and checked
 * as the MCP server will, its problem given at the entry's key path.
 */
export async function checkFeatureModules(
  config: FeatureModulesConfig & { file: string },
): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  for (const key of ['prompt_modules', 'resource_modules'] as const) {
    const entries = config[key] ?? [];
    for (let i = 0; i < entries.length; i++) {
      try {
        await loadFeatureModules({ [key]: [entries[i] as string] });
      } catch (error) {
        if (!(error instanceof FeatureModuleError)) throw error;
        issues.push({ file: config.file, path: `${key}[${i}]`, message: error.message });
      }
    }
  }
  if (issues.length > 0) return issues;
  // Names are unique across entries too.
  try {
    await loadFeatureModules(config);
  } catch (error) {
    if (!(error instanceof FeatureModuleError)) throw error;
    issues.push({ file: config.file, path: 'prompt_modules', message: error.message });
  }
  return issues;
}
