/**
 * What the schema cannot say about `llm:` and the agents' own `listeners[].llm`: backend names
 * unique, an agent's backend one that exists (did-you-mean), a model not sent to backends of
 * different providers, `llm:` only on agents the runtime runs, and script files that play. Like
 * the other semantic checks they read `data` defensively: they also run when the schema failed.
 */
import { scriptFileProblem } from '../agent/providers/scripted.ts';
import type { ConfigIssue } from '../errors.ts';
import { resolveConfigPath } from './defaults.ts';
import { DATA_DIR_PLACEHOLDER } from './schema.ts';
import type { ConfigSource } from './source.ts';
import { suggestion } from './suggest.ts';

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Backend {
  index: number;
  name: string;
  named: boolean;
  provider: string;
}

/** `base`: the config file's folder, for script paths. */
export function checkLlm(data: unknown, source: ConfigSource, base: string): ConfigIssue[] {
  if (!isObject(data)) return [];
  const issues: ConfigIssue[] = [];
  const llm = isObject(data.llm) ? data.llm : {};
  const backends: Backend[] = (Array.isArray(llm.backends) ? llm.backends : []).flatMap((b, index) =>
    isObject(b) && typeof b.provider === 'string'
      ? [
          {
            index,
            name: typeof b.name === 'string' ? b.name : b.provider,
            named: typeof b.name === 'string',
            provider: b.provider,
          },
        ]
      : [],
  );
  const seen = new Map<string, number>();
  for (const b of backends.filter((b) => b.named)) {
    const first = seen.get(b.name);
    if (first === undefined) seen.set(b.name, b.index);
    else
      issues.push(
        source.issue(
          ['llm', 'backends', b.index, 'name'],
          `duplicate backend name '${b.name}' (also llm.backends[${first}]${line(source, ['llm', 'backends', first, 'name'])})`,
        ),
      );
  }
  const script = scriptChecker(data, source, base);
  (Array.isArray(llm.backends) ? llm.backends : []).forEach((b, i) => {
    if (isObject(b) && b.provider === 'scripted') issues.push(...script(['llm', 'backends', i, 'script']));
    if (isObject(b) && b.provider === 'mcp-sampling') issues.push(...samplingKeys(b, i, source));
  });

  const listeners = Array.isArray(data.listeners) ? data.listeners : [];
  listeners.forEach((listener, index) => {
    if (!isObject(listener) || !isObject(listener.llm)) return;
    const at = ['listeners', index, 'llm'];
    const own = listener.llm;
    if (listener.agent !== true || listener.handler !== undefined) {
      issues.push(
        source.issue(
          at,
          `llm: sets the model of an agent the runtime runs (agent: true, no handler); '${String(listener.name)}' is not one`,
          'key',
        ),
      );
    }
    let chain = backends;
    if (typeof own.backend === 'string') {
      const named = backends.filter((b) => b.name === own.backend);
      if (named.length === 0) {
        const names = [...new Set(backends.map((b) => b.name))];
        issues.push(
          source.issue(
            [...at, 'backend'],
            backends.length === 0
              ? `backend '${own.backend}' names no backend: llm.backends is empty`
              : `backend '${own.backend}' names no backend in llm.backends (${names.map((n) => `'${n}'`).join(', ')})${suggestion(own.backend, names)}`,
          ),
        );
      } else if (named.length > 1) {
        issues.push(
          source.issue(
            [...at, 'backend'],
            `backend '${own.backend}' is ambiguous: ${named.map((b) => `llm.backends[${b.index}]`).join(' and ')} are all called that; give each its own name (llm.backends[].name)`,
          ),
        );
      }
      chain = named;
    }
    // The scripted provider only shows a model's name; any other provider is sent it.
    const providers = [...new Set(chain.map((b) => b.provider).filter((p) => p !== 'scripted'))];
    if (typeof own.model === 'string' && providers.length > 1) {
      issues.push(
        source.issue(
          [...at, 'model'],
          `this model would be sent to backends of ${providers.length} providers (${providers.join(', ')}); choose one with llm.backend`,
        ),
      );
    }
    issues.push(...script([...at, 'script']));
  });
  return issues;
}

/** Keys an mcp-sampling backend would ignore: the MCP client's model needs no key, URL or script. */
const NOT_FOR_SAMPLING = ['api_key_env', 'base_url', 'base_url_env', 'script'] as const;

function samplingKeys(backend: Raw, index: number, source: ConfigSource): ConfigIssue[] {
  return NOT_FOR_SAMPLING.filter((key) => backend[key] !== undefined).map((key) =>
    source.issue(
      ['llm', 'backends', index, key],
      `${key} means nothing for provider mcp-sampling: the MCP client that started the thread answers with its own model (no key, URL or script); remove it`,
      'key',
    ),
  );
}

/** A check of the script file named at a path of the config, if it names one. */
function scriptChecker(data: Raw, source: ConfigSource, base: string) {
  const organism = isObject(data.organism) ? data.organism : {};
  const dataDir =
    typeof organism.data_dir === 'string' ? resolveConfigPath(organism.data_dir, base) : undefined;
  return (path: (string | number)[]): ConfigIssue[] => {
    let value: unknown = data;
    for (const key of path) value = isObject(value) || Array.isArray(value) ? (value as any)[key] : undefined;
    if (typeof value !== 'string' || value === '') return [];
    if (value.startsWith(DATA_DIR_PLACEHOLDER) && dataDir === undefined) return [];
    const problem = scriptFileProblem(resolveConfigPath(value, base, dataDir));
    return problem === undefined ? [] : [source.issue(path, problem)];
  };
}

function line(source: ConfigSource, path: (string | number)[]): string {
  const at = source.position(path)?.line;
  return at === undefined ? '' : `, line ${at}`;
}
