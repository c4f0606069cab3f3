/**
 * A small client of the daemon's API for the CLI (`organism status`, `threads`, `tail`...). The token
 * comes from an environment variable (ORGANISM_TOKEN unless `--token-env` names another) or the same
 * variable in the .env beside organism.yaml, never from a flag: a flag would show in `ps` and in
 * shell history. Without one, the daemon of the organism.yaml in use (found through its data dir) is
 * sent that data dir's local token, so the CLI on the daemon's machine needs no setup; no other
 * address is ever sent it.
 */
import { dirname, join, resolve } from 'node:path';
import WebSocket from 'ws';
import { readDataDir } from '../config/data-dir.ts';
import { loadDotEnv } from '../config/env.ts';
import { loadConfig, type OrganismConfig } from '../config/index.ts';
import { ConfigError, type ConfigIssue, OrganismError, UsageError } from '../errors.ts';
import { liveDaemonAddress } from './address-file.ts';
import { readLocalToken } from './local-token.ts';

export const DEFAULT_TOKEN_ENV = 'ORGANISM_TOKEN';

export interface DaemonTarget {
  url: string;
  token: string | undefined;
  tokenEnv: string;
  /**
   * Where the token came from: the environment variable, the same variable in the .env beside
   * organism.yaml, or the data dir's local token file.
   */
  tokenSource?: 'env' | 'dotenv' | 'local';
}

/** The environment variable naming the daemon's address when --url is not given. */
export const URL_ENV = 'ORGANISM_URL';

/**
 * The daemon's address, first found of: `--url`; $ORGANISM_URL; ORGANISM_URL in the .env beside
 * organism.yaml; the address the running daemon wrote into its data_dir (`daemon.json`, ignored
 * when its process is gone); organism.yaml's server.host and server.port. The token: the
 * environment's; else the .env's, sent only to the address it belongs with (the .env's
 * ORGANISM_URL, or with none there this organism's daemon); else the local token of the data dir
 * whose live daemon is at that address. The process environment wins over the .env, as it does
 * for organism.yaml's ${VAR}s.
 */
export async function resolveTarget(
  values: { url?: string | undefined; config: string; 'token-env'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<DaemonTarget> {
  const tokenEnv = values['token-env'] ?? DEFAULT_TOKEN_ENV;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv))
    throw new UsageError(`--token-env must name an environment variable, not '${tokenEnv}'`);
  // Malformed lines of the .env are the loader's to report; what parses is used here.
  const dotEnv = (await loadDotEnv(join(dirname(resolve(values.config)), '.env'), '.env')).vars;
  const given = values.url || env[URL_ENV] || dotEnv[URL_ENV];
  // With an address given, the config is read only to recognize its daemon (and may be absent).
  const located = given
    ? await locate(values.config, env).catch(() => undefined)
    : await locate(values.config, env);
  const url = given || located!.url;
  if (!/^https?:\/\/[^/]/.test(url)) {
    const from = values.url
      ? '--url'
      : env[URL_ENV]
        ? URL_ENV
        : `${URL_ENV} in the .env beside ${values.config}`;
    throw new UsageError(`${from} must be an http:// or https:// address, not '${url}'`);
  }
  const target = { url: url.replace(/\/+$/, ''), tokenEnv };
  const fromEnv = env[tokenEnv];
  if (fromEnv) return { ...target, token: fromEnv, tokenSource: 'env' };
  // The .env's token goes where the .env says, or to this organism's own daemon: never to an
  // address given elsewhere (--url, $ORGANISM_URL) for another daemon.
  const fromDotEnv = dotEnv[tokenEnv];
  const belongsTo = dotEnv[URL_ENV] || located?.url;
  if (fromDotEnv && belongsTo !== undefined && sameOrigin(belongsTo, url))
    return { ...target, token: fromDotEnv, tokenSource: 'dotenv' };
  // Only to the address this data dir's live daemon wrote: never to a server squatting its port.
  const local =
    located?.live !== undefined && sameOrigin(located.live, url)
      ? await readLocalToken(located.dataDir)
      : undefined;
  return local ? { ...target, token: local, tokenSource: 'local' } : { ...target, token: undefined };
}

interface Located {
  url: string;
  dataDir: string;
  /** The URL in daemon.json when its daemon is alive. */
  live?: string;
}

/**
 * The running daemon's address from its data_dir, else the server section's. A file the loader
 * refuses (edited, and about to be reloaded) still leads to the daemon through its data_dir.
 */
async function locate(file: string, env: NodeJS.ProcessEnv): Promise<Located> {
  let config: OrganismConfig;
  try {
    ({ config } = await loadConfig(file, { env, loadModules: false }));
  } catch (error) {
    const dataDir = error instanceof ConfigError ? await readDataDir(file, env) : undefined;
    const running = dataDir === undefined ? undefined : await liveDaemonAddress(dataDir);
    if (running && dataDir !== undefined) return { url: running.url, dataDir, live: running.url };
    throw error;
  }
  const dataDir = config.organism.data_dir;
  const running = await liveDaemonAddress(dataDir);
  if (running) return { url: running.url, dataDir, live: running.url };
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  return { url: `http://${host}:${config.server.port}`, dataDir };
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/** A failed API call: the status and the API's error code and message (or why it was unreachable). */
export class ApiCallError extends OrganismError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    /** A refused reload's problems, each with its file position (the API's `error.issues`). */
    readonly issues: ConfigIssue[] = [],
  ) {
    super(code, message, { status });
  }
}

export class DaemonClient {
  constructor(readonly target: DaemonTarget) {}

  /** What to do about a 401, by where the token came from. */
  #unauthorizedHint(): string {
    const { token, tokenEnv, tokenSource } = this.target;
    if (!token)
      return ` (set ${tokenEnv} to an API token; on the daemon's machine, give --config of its organism.yaml and the CLI finds the local token)`;
    if (tokenSource === 'local') return ' (the local token in <data_dir>/api-token was not accepted)';
    if (tokenSource === 'dotenv')
      return ` (the token in ${tokenEnv} of the .env beside organism.yaml was not accepted)`;
    return ` (the token in ${tokenEnv} was not accepted)`;
  }

  #headers(): Record<string, string> {
    return this.target.token ? { authorization: `Bearer ${this.target.token}` } : {};
  }

  get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    return this.#request<T>('GET', path, query);
  }

  /**
   * POST with a JSON body, empty for the operator actions (pause, resume, kill, reload). `untimed`:
   * the answer may take as long as the daemon takes (a tool call waiting for a person's approval,
   * up to a day), past fetch's own 300 s limit on the wait for an answer.
   */
  post<T>(path: string, body: Record<string, unknown> = {}, options: { untimed?: boolean } = {}): Promise<T> {
    return this.#request<T>('POST', path, {}, body, options.untimed === true);
  }

  async #request<T>(
    method: 'GET' | 'POST',
    path: string,
    query: Record<string, string | number | undefined>,
    payload: Record<string, unknown> = {},
    untimed = false,
  ): Promise<T> {
    const url = new URL(`${this.target.url}${path}`);
    for (const [k, v] of Object.entries(query))
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    let response: Response;
    try {
      const init: RequestInit =
        method === 'GET'
          ? { headers: this.#headers() }
          : {
              method,
              headers: { ...this.#headers(), 'content-type': 'application/json' },
              body: JSON.stringify(payload),
            };
      response = untimed ? await untimedFetch(url, init) : await fetch(url, init);
    } catch (error) {
      const cause =
        (error as Error & { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
      throw new ApiCallError(
        0,
        'unreachable',
        `cannot reach the daemon at ${this.target.url}: ${cause}. Is 'organism run' running?`,
      );
    }
    const body = (await response.json().catch(() => ({}))) as T & {
      error?: { code: string; message: string; issues?: ConfigIssue[] };
    };
    if (!response.ok) {
      const hint = response.status === 401 ? this.#unauthorizedHint() : '';
      throw new ApiCallError(
        response.status,
        body.error?.code ?? 'http',
        `${response.status} ${body.error?.code ?? ''}: ${body.error?.message ?? 'unexpected answer'}${hint}`,
        Array.isArray(body.error?.issues) ? body.error.issues : [],
      );
    }
    return body;
  }

  /**
   * Opens the live stream and calls `onEvent` for each event until `signal` aborts or the server
   * closes. Resolves with how it ended; rejects with ApiCallError when the connection is refused.
   */
  stream(
    query: Record<string, string | undefined>,
    onEvent: (event: Record<string, unknown>) => boolean | undefined,
    signal?: AbortSignal,
  ): Promise<'closed' | 'aborted' | 'done'> {
    const url = new URL(`${this.target.url.replace(/^http/, 'ws')}/api/v1/stream`);
    for (const [k, v] of Object.entries(query)) if (v) url.searchParams.set(k, v);
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: this.#headers() });
      let settled = false;
      const finish = (how: 'closed' | 'aborted' | 'done') => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        resolve(how);
      };
      const onAbort = () => {
        ws.close(1000);
        finish('aborted');
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      ws.on('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        res.on('end', () => {
          settled = true;
          let error: { code?: string; message?: string } = {};
          try {
            error = (JSON.parse(text) as { error?: typeof error }).error ?? {};
          } catch {}
          const status = res.statusCode ?? 0;
          const hint = status === 401 ? this.#unauthorizedHint() : '';
          reject(
            new ApiCallError(
              status,
              error.code ?? 'http',
              `${status} ${error.code ?? ''}: ${error.message ?? 'refused'}${hint}`,
            ),
          );
        });
      });
      ws.on('error', (error) => {
        if (settled) return;
        settled = true;
        reject(
          new ApiCallError(
            0,
            'unreachable',
            `cannot reach the daemon at ${this.target.url}: ${error.message}`,
          ),
        );
      });
      ws.on('message', (data) => {
        let event: Record<string, unknown>;
        try {
          event = JSON.parse(String(data)) as Record<string, unknown>;
        } catch {
          return;
        }
        if (onEvent(event) === false) {
          ws.close(1000);
          finish('done');
        }
      });
      ws.on('close', () => finish('closed'));
    });
  }
}

/** fetch with no limit on the wait for the answer's headers and body (undici's own, loaded on use). */
async function untimedFetch(url: URL, init: RequestInit): Promise<Response> {
  const undici = await import('undici');
  const dispatcher = new undici.Agent({ headersTimeout: 0, bodyTimeout: 0 });
  try {
    const response = await undici.fetch(url, { ...(init as object), dispatcher });
    // Read here, while the agent is open; the caller reads it again from this copy.
    const text = await response.text();
    return new Response(text, { status: response.status, headers: { 'content-type': 'application/json' } });
  } finally {
    void dispatcher.close();
  }
}

/** The flags every client command takes, besides --config. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  'token-env': { type: 'string' },
} as const;

export const CLIENT_HELP = `  -c, --config FILE     organism.yaml of the daemon (default ./organism.yaml): the address the running
                        daemon wrote into its data_dir, else the server section
      --url URL         the daemon's address instead, e.g. http://127.0.0.1:7777 (else $${URL_ENV}, from
                        the environment or the .env beside organism.yaml)
      --token-env NAME  variable holding the API token (default ${DEFAULT_TOKEN_ENV}), in the environment or
                        the .env beside organism.yaml (sent only to the .env's ${URL_ENV}, or this organism's
                        daemon); unset, the daemon of --config's data dir gets its local token`;
