/**
 * `${VAR}` / `${VAR:-default}` interpolation and the optional `.env` beside organism.yaml.
 *
 * Interpolation runs on the parsed YAML scalars, not on the raw text: a value from the environment
 * can then never change the structure of the file (a `:` or newline in it stays text), and every
 * position in the file stays exact. `$${` writes a literal `${`.
 */
import { readFile } from 'node:fs/promises';
import { isPair, isScalar, isSeq, parse as parseYamlScalar, type Scalar, visit } from 'yaml';
import type { ConfigIssue } from '../errors.ts';
import { type ConfigSource, formatPath } from './source.ts';

const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses .env text: `KEY=value`, `export KEY=value`, `#` comments, single or double quotes. */
export function parseDotEnv(
  text: string,
  file: string,
): { vars: Record<string, string>; issues: ConfigIssue[] } {
  const vars: Record<string, string> = {};
  const issues: ConfigIssue[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) {
      issues.push({ file, line: index + 1, column: 1, path: '', message: 'expected KEY=value' });
      return;
    }
    vars[match[1]!] = unquote(match[2]!);
  });
  return { vars, issues };
}

function unquote(value: string): string {
  const quote = value[0];
  if ((quote === '"' || quote === "'") && value.length >= 2) {
    const end = value.lastIndexOf(quote);
    if (end > 0) {
      const inner = value.slice(1, end);
      return quote === '"' ? inner.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\') : inner;
    }
  }
  // Unquoted: a ` #` starts a comment.
  const hash = value.search(/\s#/);
  return (hash >= 0 ? value.slice(0, hash) : value).trim();
}

/** Reads `.env` at `path` if it exists. Values from the real environment win over it. */
export async function loadDotEnv(
  path: string,
  shownAs: string,
): Promise<{ vars: Record<string, string>; issues: ConfigIssue[] }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { vars: {}, issues: [] };
    return {
      vars: {},
      issues: [{ file: shownAs, path: '', message: `cannot read: ${(error as Error).message}` }],
    };
  }
  return parseDotEnv(text, shownAs);
}

/** `.env` values under the process environment's: a variable set (even empty) in `env` wins. */
export function mergeEnv(dotEnv: Record<string, string>, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...dotEnv };
  for (const [name, value] of Object.entries(env)) if (value !== undefined) merged[name] = value;
  return merged;
}

/**
 * Replaces references in every scalar value of the document (keys are left alone). Plain
 * (unquoted) scalars are re-typed after substitution so `port: ${PORT:-7777}` is a number; quoted
 * ones stay strings. Returns one issue per undefined variable without a default.
 */
export function interpolate(source: ConfigSource, env: Record<string, string | undefined>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  visit(source.doc, {
    Scalar(key, node, ancestors) {
      if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('${')) return;
      const replaced = substitute(node.value, env, (name, detail, index) => {
        const offset = locate(source.text, node, index);
        issues.push({
          file: source.file,
          ...(offset === undefined ? {} : source.at(offset)),
          path: formatPath(keyPathOf(ancestors, node)),
          message:
            detail ??
            `environment variable ${name} is not set and has no default (write \${${name}:-default})`,
        });
      });
      if (replaced === undefined) return;
      node.value = node.type === 'PLAIN' ? retype(replaced) : replaced;
      source.interpolated.add(node);
    },
  });
  return issues;
}

type Report = (name: string, detail: string | undefined, index: number) => void;

function substitute(
  text: string,
  env: Record<string, string | undefined>,
  report: Report,
): string | undefined {
  let failed = false;
  const out = text.replace(REFERENCE, (whole: string, body: string | undefined, index: number) => {
    if (whole === '$${') return '${';
    const inner = body ?? '';
    const sep = inner.indexOf(':-');
    const name = sep >= 0 ? inner.slice(0, sep) : inner;
    if (!VAR_NAME.test(name)) {
      failed = true;
      report(name, `bad reference '\${${inner}}': expected \${NAME} or \${NAME:-default}`, index);
      return whole;
    }
    const value = env[name];
    // As in POSIX shells, `:-` also applies when the variable is set but empty.
    if (sep >= 0) return value === undefined || value === '' ? inner.slice(sep + 2) : value;
    if (value !== undefined) return value;
    failed = true;
    report(name, undefined, index);
    return whole;
  });
  return failed ? undefined : out;
}

/** Numbers and booleans in a plain scalar become numbers and booleans, as YAML would have read them. */
function retype(value: string): unknown {
  if (value.trim() === '') return value;
  try {
    const parsed = parseYamlScalar(value);
    return typeof parsed === 'number' || typeof parsed === 'boolean' ? parsed : value;
  } catch {
    return value;
  }
}

/** Offset in the file of the reference at `index` of the scalar's value, found in the node's source text. */
function locate(text: string, node: Scalar, index: number): number | undefined {
  const range = node.range;
  if (!range) return undefined;
  const reference = /^\$\{[^}]*\}?/.exec((node.value as string).slice(index))?.[0] ?? '${';
  const at = text.slice(range[0], range[1]).indexOf(reference);
  return range[0] + Math.max(at, 0);
}

/** Key path of a node from the ancestors `visit` hands over (Document, maps, pairs, sequences). */
function keyPathOf(ancestors: readonly unknown[], node: unknown): (string | number)[] {
  const path: (string | number)[] = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length - 1; i++) {
    const here = chain[i];
    if (isPair(here) && isScalar(here.key)) path.push(String(here.key.value));
    else if (isSeq(here)) path.push(here.items.indexOf(chain[i + 1] as never));
  }
  return path;
}
