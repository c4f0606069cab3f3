/**
 * The HTTP layer of the eXist backend: one undici Agent per backend, Basic auth from the password
 * env var, and the mapping of eXist's status codes to LibrarianError, in one place so every
 * operation reports a 401, 403, 404 or unreachable server the same way. The password is read when a
 * request is made and never appears in an error.
 */
import type { Agent } from 'undici';
import { LibrarianError } from '../../src/errors.ts';
import { lazyRequire } from '../../src/lazy-require.ts';
import { encodePath } from '../paths.ts';
import { parseException } from './result.ts';

const undici = lazyRequire<typeof import('undici')>('undici');

export interface ExistClientOptions {
  /** REST base, e.g. http://localhost:8080/exist/rest (no trailing slash). */
  url: string;
  user?: string;
  passwordEnv?: string;
  /** For tests: where the password is read from. */
  env?: NodeJS.ProcessEnv;
}

export interface ExistResponse {
  status: number;
  body: string;
  contentType: string;
}

export interface RequestOptions {
  query?: Record<string, string>;
  body?: string;
  contentType?: string;
  signal?: AbortSignal | undefined;
}

/** Largest response body read; eXist listings and results beyond this are refused, not buffered. */
const MAX_BODY = 64 * 1024 * 1024;

export class ExistClient {
  // undici when an eXist backend is made, not when the librarian tools load.
  private readonly agent: Agent = new (undici().Agent)({ connections: 8, keepAliveTimeout: 10_000 });

  constructor(private readonly options: ExistClientOptions) {}

  get url(): string {
    return this.options.url;
  }

  get user(): string | undefined {
    return this.options.user;
  }

  private authorization(): string | undefined {
    if (!this.options.user) return undefined;
    const env = this.options.env ?? process.env;
    const password = this.options.passwordEnv ? (env[this.options.passwordEnv] ?? '') : '';
    return `Basic ${Buffer.from(`${this.options.user}:${password}`).toString('base64')}`;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ExistResponse> {
    const search = new URLSearchParams(options.query ?? {}).toString();
    const target = `${this.options.url}${encodePath(path)}${search ? `?${search}` : ''}`;
    const headers: Record<string, string> = { accept: 'application/xml, text/xml, */*' };
    const auth = this.authorization();
    if (auth) headers.authorization = auth;
    if (options.contentType) headers['content-type'] = options.contentType;
    let response: Awaited<ReturnType<typeof import('undici').request>>;
    try {
      response = await undici().request(target, {
        method: method as 'GET',
        headers,
        body: options.body ?? null,
        signal: options.signal ?? null,
        dispatcher: this.agent,
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new LibrarianError(
        'librarian.backend',
        `cannot reach eXist-db at ${this.options.url}: ${code}`,
        { url: this.options.url },
        {
          cause: error,
        },
      );
    }
    const length = Number(response.headers['content-length'] ?? 0);
    if (length > MAX_BODY) {
      await response.body.dump();
      throw new LibrarianError(
        'librarian.backend',
        `eXist-db sent ${length} bytes for ${path}, more than the ${MAX_BODY} the librarian reads`,
      );
    }
    const body = await response.body.text();
    const contentType = String(response.headers['content-type'] ?? '');
    return { status: response.statusCode, body, contentType };
  }

  /** The LibrarianError for a response that is not the success the caller expected. */
  failure(response: ExistResponse, path: string, action: string): LibrarianError {
    const { status } = response;
    if (status === 401) {
      const who = this.options.user
        ? `the credentials of user "${this.options.user}"`
        : 'anonymous access (set librarian.user and librarian.password_env)';
      return new LibrarianError(
        'librarian.auth',
        `eXist-db at ${this.options.url} refused ${who} (401 Unauthorized)`,
        {
          user: this.options.user ?? null,
          status,
        },
      );
    }
    if (status === 403) {
      return new LibrarianError(
        'librarian.denied',
        `eXist-db user "${this.options.user ?? 'guest'}" may not ${action} ${path} (403 Forbidden)`,
        { path, status },
      );
    }
    if (status === 404) return new LibrarianError('librarian.not_found', `not found: ${path}`, { path });
    const message =
      parseException(response.body) ??
      response.body
        .replace(/<[^>]*>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 300);
    return new LibrarianError(
      'librarian.backend',
      `eXist-db could not ${action} ${path} (HTTP ${status}): ${message}`,
      {
        path,
        status,
      },
    );
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
