/**
 * loadConfig: organism.yaml -> validated, defaults-applied OrganismConfig plus the loaded listener
 * modules. Every stage adds to one list of issues; if any were found, one ConfigError carries them
 * all, sorted by position, so a user fixes the whole file in one pass.
 */
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { checkpointDirProblem } from '../audit/checkpoint.ts';
import { keyFileProblem } from '../audit/key.ts';
import { ConfigError, type ConfigIssue, ListenerLoadError } from '../errors.ts';
import { loadListenerModule } from '../listener/loader.ts';
import type { ListenerDefinition } from '../listener/types.ts';
import { checkCodeInWorkspaces } from './code-check.ts';
import { finishConfig, resolveConfigPath } from './defaults.ts';
import { interpolate, loadDotEnv, mergeEnv } from './env.ts';
import { checkLlm } from './llm-check.ts';
import { parseConfigText, readConfigText, toPlain } from './read.ts';
import { checkStructure, checkTags, rawListeners, type TaggedListener } from './semantic.ts';
import type { ConfigSource } from './source.ts';
import type { ListenerConfig, OrganismConfig } from './types.ts';
import { validateAgainstSchema } from './validate.ts';

export interface LoadConfigOptions {
  /**
   * Variables for `${VAR}` and every `*_env` key; default process.env. A `.env` beside the file
   * fills in what this lacks (the merged result is `LoadedOrganism.env`).
   */
  env?: NodeJS.ProcessEnv;
  /** Import each listener's handler module (and check it). Default true; false reads only the file. */
  loadModules?: boolean;
  /** The file read already by readConfig(file, { env }) (the daemon reads it first for its data dir). */
  read?: ReadConfig;
}

/** organism.yaml read, parsed, with its `.env` and `${VAR}`s: where loadConfig goes on from. */
export interface ReadConfig {
  source: ConfigSource;
  /** The plain value of the document (aliases expanded). */
  data: unknown;
  /** As LoadedOrganism.env. Holds secrets. */
  env: NodeJS.ProcessEnv;
  /** Found so far (`.env` and `${VAR}` problems): loadConfig reports them with the rest. */
  issues: ConfigIssue[];
}

export interface LoadedListener {
  config: ListenerConfig;
  /** The module's defineListener(...) value; absent for agents without a handler, or with loadModules: false. */
  definition?: ListenerDefinition<any>;
  /**
   * Root tag the listener is routed by: the yaml `payload` override, else the module's payload.tag,
   * else (agents) the listener name. '' only when loadModules is false and nothing else says.
   */
  tag: string;
}

export interface LoadedOrganism {
  config: OrganismConfig;
  listeners: LoadedListener[];
  /**
   * The environment every `*_env` key and `${VAR}` of this config is read from: the `.env` beside
   * organism.yaml with `options.env` (default process.env) over it, so the process environment wins.
   * Holds secrets: pass it on, never log or serialize it.
   */
  env: NodeJS.ProcessEnv;
}

/**
 * The first steps of loadConfig: reads and parses `file`, reads the `.env` beside it and fills in
 * `${VAR}`s. Throws ConfigError when the file cannot be read, parsed or made a plain value.
 */
export async function readConfig(
  file: string,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<ReadConfig> {
  const absFile = resolve(file);
  const base = dirname(absFile);
  const text = await readConfigText(absFile, file);
  if (typeof text !== 'string') throw new ConfigError([text]);
  const parsed = parseConfigText(text, file);
  if (!parsed.source) throw new ConfigError(parsed.issues);
  const source = parsed.source;

  const dotEnv = await loadDotEnv(join(base, '.env'), join(dirname(file), '.env'));
  const issues: ConfigIssue[] = [...dotEnv.issues];
  const env = mergeEnv(dotEnv.vars, options.env ?? process.env);
  issues.push(...interpolate(source, env));
  try {
    return { source, data: toPlain(source), env, issues };
  } catch (error) {
    throw new ConfigError([...issues, { file, path: '', message: (error as Error).message }]);
  }
}

/** Loads and checks `file`. Throws ConfigError with every issue found. */
export async function loadConfig(file: string, options: LoadConfigOptions = {}): Promise<LoadedOrganism> {
  const loadModules = options.loadModules ?? true;
  const absFile = resolve(file);
  const base = dirname(absFile);
  const read = options.read ?? (await readConfig(file, options));
  const { source, data, env } = read;
  const issues = [...read.issues];
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    issues.push(source.issue([], 'expected a mapping with at least `organism:` and `listeners:`'));
    throw new ConfigError(sortIssues(issues));
  }

  const schemaIssues = validateAgainstSchema(data, source);
  issues.push(...schemaIssues, ...checkStructure(data, source), ...checkLlm(data, source, base));
  // Before any module is loaded: one in a workspace is not run, not even to be described.
  const codeInWorkspace = checkCodeInWorkspaces(data, source, base);
  issues.push(...codeInWorkspace.issues);

  const raws = rawListeners(data);
  const definitions = new Map<number, ListenerDefinition<any>>();
  const failed = new Set<number>();
  if (loadModules) {
    await Promise.all(
      raws.map(async ({ index, raw }) => {
        if (typeof raw.handler !== 'string' || raw.handler === '') return;
        if (codeInWorkspace.listeners.has(index)) {
          failed.add(index);
          return;
        }
        const absModule = resolveConfigPath(raw.handler, base);
        try {
          definitions.set(index, await loadListenerModule(absModule));
        } catch (error) {
          failed.add(index);
          issues.push(
            source.issue(['listeners', index, 'handler'], moduleMessage(raw.handler, absModule, error)),
          );
        }
      }),
    );
  }
  // A module that names its listener (for `organism types`) is that listener only: under another
  // name its ctx would be typed by the wrong grants and peers.
  for (const { index, raw } of raws) {
    const own = definitions.get(index)?.name;
    if (typeof own === 'string' && typeof raw.name === 'string' && own !== raw.name) {
      issues.push(
        source.issue(
          ['listeners', index, 'name'],
          `the module ${String(raw.handler)} is the listener '${own}' (defineListener's name), not '${raw.name}': ` +
            'rename one of them, or leave name out of the module to use it under several names',
        ),
      );
    }
  }

  const tagged: TaggedListener[] = raws.flatMap(({ index, raw }) => {
    if (typeof raw.name !== 'string') return [];
    const definition = definitions.get(index);
    const hasHandler = typeof raw.handler === 'string';
    const moduleKnown = !hasHandler || (loadModules && !failed.has(index));
    const described =
      (typeof raw.description === 'string' && raw.description !== '') ||
      (typeof definition?.description === 'string' && definition.description.trim() !== '');
    return [
      {
        index,
        name: raw.name,
        tag: listenerTag(raw.payload, definition, raw.agent === true, raw.name),
        agent: raw.agent === true,
        broadcast: raw.broadcast === true,
        described: described ? true : moduleKnown ? false : undefined,
        hasHandler,
      },
    ];
  });
  issues.push(...checkTags(tagged, source));

  if (issues.length > 0) throw new ConfigError(sortIssues(issues));

  const config = finishConfig(data as Record<string, any>, absFile, base);
  // The audit key must live where whoever can write the audit log cannot read it.
  const keyProblem =
    config.audit.key_file === undefined
      ? undefined
      : keyFileProblem(config.audit.key_file, config.organism.data_dir, config.organism.workspace);
  if (keyProblem) throw new ConfigError([source.issue(['audit', 'key_file'], keyProblem)]);
  const checkpointProblem =
    config.audit.checkpoint_dir === undefined
      ? undefined
      : checkpointDirProblem(
          config.audit.checkpoint_dir,
          config.organism.data_dir,
          config.organism.workspace,
        );
  if (checkpointProblem)
    throw new ConfigError([source.issue(['audit', 'checkpoint_dir'], checkpointProblem)]);
  const workspaceProblem = workspaceInDataDir(config.organism.workspace, config.organism.data_dir);
  if (workspaceProblem) throw new ConfigError([source.issue(['organism', 'workspace'], workspaceProblem)]);
  const listeners = config.listeners.map((listenerConfig, index): LoadedListener => {
    const definition = definitions.get(index);
    if (listenerConfig.description === undefined)
      listenerConfig.description = definition?.description?.trim() ?? '';
    const loaded: LoadedListener = {
      config: listenerConfig,
      tag: tagged.find((t) => t.index === index)?.tag ?? '',
    };
    if (definition) loaded.definition = definition;
    return loaded;
  });
  return { config, listeners, env };
}

/**
 * The sandbox binds the workspace back, writable, over the cover of the data dir: a workspace that
 * is the data dir, or one of its folders other than `workspace/` (the default's place), would show
 * run_command the audit log, the signing key and the stores.
 */
function workspaceInDataDir(workspace: string, dataDir: string): string | undefined {
  const rel = relative(resolve(dataDir), resolve(workspace));
  const inside = rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  if (!inside) return undefined;
  const first = rel.split(sep)[0];
  if (rel !== '' && first === 'workspace') return undefined;
  return `organism.workspace (${workspace}) is the data dir or a folder of its own data (${dataDir}): commands would see the audit log, keys and stores there. Put it outside the data dir, or in its workspace/ folder (the default)`;
}

function listenerTag(
  override: unknown,
  definition: ListenerDefinition<any> | undefined,
  agent: boolean,
  name: string,
): string {
  if (typeof override === 'string' && override !== '') return override;
  if (definition) return definition.payload.tag;
  return agent ? name : '';
}

function moduleMessage(shown: string, absModule: string, error: unknown): string {
  const prefix = `cannot load listener module ${absModule}: `;
  const reason =
    error instanceof ListenerLoadError && error.message.startsWith(prefix)
      ? error.message.slice(prefix.length)
      : ((error as Error)?.message ?? String(error));
  return `handler module '${shown}' does not load: ${reason}`;
}

function sortIssues(issues: ConfigIssue[]): ConfigIssue[] {
  const far = Number.MAX_SAFE_INTEGER;
  return issues
    .map((issue, order) => ({ issue, order }))
    .sort(
      (a, b) =>
        (a.issue.file === b.issue.file ? 0 : a.issue.file < b.issue.file ? -1 : 1) ||
        (a.issue.line ?? far) - (b.issue.line ?? far) ||
        (a.issue.column ?? far) - (b.issue.column ?? far) ||
        a.order - b.order,
    )
    .map(({ issue }) => issue);
}
