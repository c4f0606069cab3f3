/**
 * A small client of the daemon's API for the CLI (`organism status`, `threads`, `tail`...). The token
 * comes from an environment variable (ORGANISM_TOKEN unless `--token-env` names another), never
 * from a flag: a flag would show in `ps` and in shell history.
 */
import WebSocket from 'ws';
import { readDataDir } from '../config/data-dir.ts';
import { loadConfig, type OrganismConfig } from '../config/index.ts';
import { ConfigError, type ConfigIssue, OrganismError, UsageError } from '../errors.ts';
import { liveDaemonAddress } from './address-file.ts';

export const DEFAULT_TOKEN_ENV = 'ORGANISM_TOKEN';

export interface DaemonTarget {
  url: string;
  token: string | undefined;
  tokenEnv: string;
}

/** The environment variable naming the daemon's address when --url is not given. */
export const URL_ENV = 'ORGANISM_URL';

/**
 * The daemon's address, first found of: `--url`; $ORGANISM_URL; the address the running daemon
 * wrote into its data_dir (`daemon.json`, ignored when its process is gone); organism.yaml's
 * server.host and server.port. Plus the token from the environment.
 */
export async function resolveTarget(
  values: { url?: string | undefined; config: string; 'token-env'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<DaemonTarget> {
  const tokenEnv = values['token-env'] ?? DEFAULT_TOKEN_ENV;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv))
    throw new UsageError(`--token-env must name an environment variable, not '${tokenEnv}'`);
  const url = values.url || env[URL_ENV] || (await addressFromConfig(values.config, env));
  if (!/^https?:\/\/[^/]/.test(url)) {
    const from = values.url ? '--url' : URL_ENV;
    throw new UsageError(`${from} must be an http:// or https:// address, not '${url}'`);
  }
  return { url: url.replace(/\/+$/, ''), token: env[tokenEnv] || undefined, tokenEnv };
}

/**
 * The running daemon's address from its data_dir, else the server section's. A file the loader
 * refuses (edited, and about to be reloaded) still leads to the daemon through its data_dir.
 */
async function addressFromConfig(file: string, env: NodeJS.ProcessEnv): Promise<string> {
  let config: OrganismConfig;
  try {
    ({ config } = await loadConfig(file, { env, loadModules: false }));
  } catch (error) {
    const dataDir = error instanceof ConfigError ? await readDataDir(file, env) : undefined;
    const running = dataDir === undefined ? undefined : await liveDaemonAddress(dataDir);
    if (running) return running.url;
    throw error;
  }
  const running = await liveDaemonAddress(config.organism.data_dir);
  if (running) return running.url;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  return `http://${host}:${config.server.port}`;
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

  #headers(): Record<string, string> {
    return this.target.token ? { authorization: `Bearer ${this.target.token}` } : {};
  }

  get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    return this.#request<T>('GET', path, query);
  }

  /** POST with a JSON body, empty for the operator actions (pause, resume, kill, reload). */
  post<T>(path: string, body: Record<string, unknown> = {}): Promise<T> {
    return this.#request<T>('POST', path, {}, body);
  }

  async #request<T>(
    method: 'GET' | 'POST',
    path: string,
    query: Record<string, string | number | undefined>,
    payload: Record<string, unknown> = {},
  ): Promise<T> {
    const url = new URL(`${this.target.url}${path}`);
    for (const [k, v] of Object.entries(query))
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    let response: Response;
    try {
      response = await fetch(
        url,
        method === 'GET'
          ? { headers: this.#headers() }
          : {
              method,
              headers: { ...this.#headers(), 'content-type': 'application/json' },
              body: JSON.stringify(payload),
            },
      );
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
      const hint =
        response.status === 401
          ? this.target.token
            ? ` (the token in ${this.target.tokenEnv} was not accepted)`
            : ` (set ${this.target.tokenEnv} to an API token)`
          : '';
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
          const hint =
            status === 401 && !this.target.token ? ` (set ${this.target.tokenEnv} to an API token)` : '';
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

/** The flags every client command takes, besides --config. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  'token-env': { type: 'string' },
} as const;

export const CLIENT_HELP = `  -c, --config FILE     organism.yaml of the daemon (default ./organism.yaml): the address the running
                        daemon wrote into its data_dir, else the server section
      --url URL         the daemon's address instead, e.g. http://127.0.0.1:7777 (else $${URL_ENV})
      --token-env NAME  environment variable holding the API token (default ${DEFAULT_TOKEN_ENV})`;
