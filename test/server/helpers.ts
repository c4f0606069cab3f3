/**
 * For the service tests: an organism.yaml in a temp folder (the repo's hello-world listeners plus
 * test listeners, by absolute path), the real daemon started on it, and small API helpers.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type NotYet, until as waitFor } from '../../src/testing/index.ts';
import { type DaemonProcess, startDaemonProcess, tokenFor } from '../helpers/daemon.ts';

export const LISTENERS = fileURLToPath(new URL('../../listeners/', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export const ADMIN_TOKEN = 'adm-Zq8rT2vLw9Kp4Xn7';
export const OPERATOR_TOKEN = 'op-Hj3mB6cVt1Ys5Ud0';
export const VIEWER_TOKEN = 'view-Pf4gN8sWq2Le6Rk9';
export const TOKENS_ENV = {
  TEST_ADMIN_TOKEN: ADMIN_TOKEN,
  TEST_OPERATOR_TOKEN: OPERATOR_TOKEN,
  TEST_VIEWER_TOKEN: VIEWER_TOKEN,
};
export const AUTH_YAML = `auth:
  tokens:
    - { name: root, role: admin, token_env: TEST_ADMIN_TOKEN }
    - { name: ops, role: operator, token_env: TEST_OPERATOR_TOKEN }
    - { name: watcher, role: viewer, token_env: TEST_VIEWER_TOKEN }
`;

/** The chain greeter -> shouter -> printer, by absolute path to the repo's modules. */
export function chainYaml(options: { shouter?: string; shouterDescription?: string } = {}): string {
  return `  - name: greeter
    handler: ${LISTENERS}greeter.ts
    peers: [shouter]
  - name: shouter
    handler: ${options.shouter ?? `${LISTENERS}shouter.ts`}
    peers: [printer]${options.shouterDescription ? `\n    description: ${options.shouterDescription}` : ''}
  - name: printer
    handler: ${LISTENERS}printer.ts
`;
}

export const NAPPER_YAML = `  - name: napper
    handler: ${FIXTURES}napper.ts
`;

/** A temp folder holding organism.yaml (written from `yaml`), returned with its path. */
export async function organismDir(yaml: string): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-service-'));
  const file = join(dir, 'organism.yaml');
  await writeFile(file, yaml);
  return { dir, file };
}

export async function startOn(file: string, env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
  return startDaemonProcess(['--config', file], env);
}

export interface CallOptions {
  /**
   * The bearer token; left out, the local token of the daemon started here at `base` (the person
   * on the daemon's machine, as the CLI finds it); null sends none.
   */
  token?: string | null;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export async function call(
  base: string,
  path: string,
  options: CallOptions = {},
): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? tokenFor(base) : options.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(`${base}${path}`, {
    method: options.method ?? (body ? 'POST' : 'GET'),
    headers,
    body,
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** The value of the first Prometheus series of `name` whose labels include `labels`, or 0. */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const found = Object.fromEntries(
      [...(match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[2]);
  }
  return 0;
}

/**
 * The kit's until() (src/testing) with the defaults of a test against a daemon: 15 s, as its work
 * crosses processes, and probes 50 ms apart, so polling its API does not load it.
 */
export function until<T>(probe: () => Promise<T | NotYet> | T | NotYet, ms = 15_000): Promise<T> {
  return waitFor(probe, { timeoutMs: ms, intervalMs: 50 });
}
