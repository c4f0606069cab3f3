/**
 * Checks the schema cannot express: names unique, peers existing, root tags not shared (unless
 * every sharer broadcasts), handlers present, descriptions present. They run even when the schema
 * found problems, so one run reports everything; hence the defensive reading of `data`.
 */
import type { ConfigIssue } from '../errors.ts';
import { checkMcpSections } from '../mcp/config-check.ts';
import { envAllowlistProblem, secretNamePart } from '../sandbox/env.ts';
import { isRuntimeStateName, RUNTIME_STATE_NAMES } from '../state/names.ts';
import { checkBus } from './bus-check.ts';
import type { ConfigSource } from './source.ts';
import { suggestion } from './suggest.ts';

type Raw = Record<string, unknown>;

const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The listener entries that are mappings, with their index in the file. */
export function rawListeners(data: unknown): { index: number; raw: Raw }[] {
  const list = isObject(data) && Array.isArray(data.listeners) ? data.listeners : [];
  return list.flatMap((raw, index) => (isObject(raw) ? [{ index, raw }] : []));
}

/** Checks that need only the file: names, peers, handlers, tool_config keys, env_allowlist, runtime names, auth tokens. */
export function checkStructure(data: unknown, source: ConfigSource): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const listeners = rawListeners(data);
  const firstByName = new Map<string, number>();
  for (const { index, raw } of listeners) {
    if (typeof raw.name !== 'string') continue;
    const first = firstByName.get(raw.name);
    if (first === undefined) firstByName.set(raw.name, index);
    else {
      const firstLine = source.position(['listeners', first, 'name'])?.line;
      issues.push(
        source.issue(
          ['listeners', index, 'name'],
          `duplicate listener name '${raw.name}' (also listeners[${first}]${firstLine ? `, line ${firstLine}` : ''})`,
        ),
      );
    }
  }
  const names = [...firstByName.keys()];
  for (const { index, raw } of listeners) {
    if (Array.isArray(raw.peers)) {
      raw.peers.forEach((peer, i) => {
        if (typeof peer === 'string' && !firstByName.has(peer)) {
          issues.push(
            source.issue(
              ['listeners', index, 'peers', i],
              `peer '${peer}' names no listener${suggestion(peer, names)}`,
            ),
          );
        }
      });
    }
    if (raw.agent !== true && raw.handler === undefined) {
      issues.push(
        source.issue(
          ['listeners', index],
          `listener '${String(raw.name)}' has no handler: give a module path in 'handler' (only agents, agent: true, run without one)`,
          'key',
        ),
      );
    }
    if (isObject(raw.tool_config)) {
      const granted = Array.isArray(raw.tools)
        ? raw.tools.filter((t): t is string => typeof t === 'string')
        : [];
      for (const tool of Object.keys(raw.tool_config)) {
        if (!granted.includes(tool)) {
          issues.push(
            source.issue(
              ['listeners', index, 'tool_config', tool],
              `tool_config for '${tool}', which is not in this listener's tools${suggestion(tool, granted)}`,
              'key',
            ),
          );
        }
      }
    }
  }
  issues.push(...checkEnvAllowlists(listeners, source));
  issues.push(...checkRuntimeNames(listeners, source));
  issues.push(...checkAuth(data, source));
  issues.push(...checkMcpSections(data, source));
  issues.push(...checkBus(data, source));
  return issues;
}

/** run_command's env_allowlist: no name that looks like a secret, refused before anything runs. */
function checkEnvAllowlists(listeners: { index: number; raw: Raw }[], source: ConfigSource): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const { index, raw } of listeners) {
    const config = isObject(raw.tool_config) ? raw.tool_config.run_command : undefined;
    const names = isObject(config) && Array.isArray(config.env_allowlist) ? config.env_allowlist : [];
    names.forEach((name, i) => {
      // A name that is not a name at all is the schema's to report, when the tool runtime checks it.
      if (typeof name !== 'string' || secretNamePart(name) === null) return;
      const problem = envAllowlistProblem(name) as string;
      issues.push(
        source.issue(['listeners', index, 'tool_config', 'run_command', 'env_allowlist', i], problem),
      );
    });
  }
  return issues;
}

/**
 * The runtime's own state names (approvals, effects): no listener and no allowed_namespaces entry
 * may take one. A listener named `approvals` would pass for the approvals' sender in thread records.
 */
function checkRuntimeNames(listeners: { index: number; raw: Raw }[], source: ConfigSource): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const reserved = RUNTIME_STATE_NAMES.map((n) => `'${n}'`).join(', ');
  for (const { index, raw } of listeners) {
    if (typeof raw.name === 'string' && isRuntimeStateName(raw.name)) {
      issues.push(
        source.issue(
          ['listeners', index, 'name'],
          `listener name '${raw.name}' is one of the runtime's own names (${reserved}); choose another name`,
        ),
      );
    }
    if (!isObject(raw.tool_config)) continue;
    for (const [tool, config] of Object.entries(raw.tool_config)) {
      const names =
        isObject(config) && Array.isArray(config.allowed_namespaces) ? config.allowed_namespaces : [];
      names.forEach((name, i) => {
        if (typeof name !== 'string' || !isRuntimeStateName(name)) return;
        issues.push(
          source.issue(
            ['listeners', index, 'tool_config', tool, 'allowed_namespaces', i],
            `namespace '${name}' is one of the runtime's own names (${reserved}); no tool may use it`,
          ),
        );
      });
    }
  }
  return issues;
}

function checkAuth(data: unknown, source: ConfigSource): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const tokens =
    isObject(data) && isObject(data.auth) && Array.isArray(data.auth.tokens) ? data.auth.tokens : [];
  const seen = new Set<string>();
  tokens.forEach((token, i) => {
    if (!isObject(token)) return;
    const path = ['auth', 'tokens', i];
    const count = Number(token.token_env !== undefined) + Number(token.sha256 !== undefined);
    if (count !== 1) {
      issues.push(
        source.issue(
          path,
          `give exactly one of token_env or sha256 (found ${count === 0 ? 'neither' : 'both'})`,
          'key',
        ),
      );
    }
    if (typeof token.name === 'string') {
      if (seen.has(token.name))
        issues.push(source.issue([...path, 'name'], `duplicate token name '${token.name}'`));
      seen.add(token.name);
    }
  });
  return issues;
}

/** One listener as known after its module loaded (or failed to). */
export interface TaggedListener {
  index: number;
  name: string;
  /** '' when unknown (module not loaded and no payload override). */
  tag: string;
  agent: boolean;
  broadcast: boolean;
  /** Whether a description was found in the file or the module; undefined when that is unknown. */
  described: boolean | undefined;
  hasHandler: boolean;
}

/** Root tags: shared only when every sharer says broadcast: true, and never by an agent. */
export function checkTags(listeners: readonly TaggedListener[], source: ConfigSource): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const byTag = new Map<string, TaggedListener[]>();
  for (const l of listeners) {
    if (l.tag === '') continue;
    byTag.set(l.tag, [...(byTag.get(l.tag) ?? []), l]);
  }
  for (const [tag, sharers] of byTag) {
    if (sharers.length < 2) continue;
    const names = sharers.map((s) => `'${s.name}'`).join(', ');
    const agents = sharers.filter((s) => s.agent);
    const quiet = sharers.filter((s) => !s.broadcast);
    for (const l of sharers.slice(1)) {
      const at = tagPath(l, source);
      if (agents.length > 0) {
        issues.push(
          source.issue(at, `root tag <${tag}> is shared by ${names}; an agent's tag must be its own`),
        );
      } else if (quiet.length > 0) {
        const fix = quiet.map((s) => `'${s.name}'`).join(', ');
        issues.push(
          source.issue(
            at,
            `root tag <${tag}> is shared by ${names}; give each its own tag, or set broadcast: true on every one (missing on ${fix})`,
          ),
        );
      }
    }
  }
  for (const l of listeners) {
    if (l.described === false) {
      issues.push(
        source.issue(
          ['listeners', l.index],
          `listener '${l.name}' has no description: add 'description' here${l.hasHandler ? " or in its module's defineListener({ description })" : ''}`,
          'key',
        ),
      );
    }
  }
  return issues;
}

/** Where to point for a listener's tag: its `payload` override, else its handler, else its name. */
function tagPath(l: TaggedListener, source: ConfigSource): (string | number)[] {
  for (const key of ['payload', 'handler', 'name']) {
    if (source.node(['listeners', l.index, key])) return ['listeners', l.index, key];
  }
  return ['listeners', l.index];
}
