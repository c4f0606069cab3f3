/**
 * The ClientChannel of one tools/call (client-channel.ts): requests and notifications to the MCP
 * client that made the call, sent as related to that call so they travel on its stream and arrive
 * before its result. Log notifications pass the session's level (logging/setLevel) and carry no
 * secret the daemon knows; progress goes out only when the call gave a progressToken. Once the
 * call has answered, the channel is closed: notifications are dropped, requests refused.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  ErrorCode,
  type LoggingLevel,
  McpError as SdkMcpError,
} from '@modelcontextprotocol/sdk/types.js';
import { redactKnown } from '../../audit/redact.ts';
import { McpClientError } from '../../errors.ts';
import type { Principal } from '../../server/auth.ts';
import type {
  ClientChannel,
  ClientOffers,
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
} from './client-channel.ts';

const SEVERITY: Record<LoggingLevel, number> = {
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7,
};

export function isLoggingLevel(value: unknown): value is LoggingLevel {
  return typeof value === 'string' && Object.hasOwn(SEVERITY, value);
}

/** What a session keeps that its calls' channels read (its level may change while a call runs). */
export interface SessionView {
  level: LoggingLevel;
}

/** What the SDK hands a request handler, as far as the channel needs it. */
export interface CallExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number } & Record<string, unknown>;
  sendNotification(notification: { method: string; params?: Record<string, unknown> }): Promise<void>;
  sendRequest(
    request: { method: string; params?: Record<string, unknown> },
    schema: unknown,
    options?: { signal?: AbortSignal; timeout?: number },
  ): Promise<unknown>;
}

export class CallChannel implements ClientChannel {
  readonly offers: ClientOffers;
  readonly client: { readonly name: string; readonly version: string };
  readonly caller: Principal;
  readonly #extra: CallExtra;
  readonly #session: SessionView;
  readonly #timeoutMs: number;
  readonly #token: string | number | undefined;
  #open = true;

  constructor(server: Server, extra: CallExtra, session: SessionView, caller: Principal, timeoutMs: number) {
    const caps = server.getClientCapabilities() ?? {};
    const elicitation = caps.elicitation as { form?: unknown; url?: unknown } | undefined;
    this.offers = {
      sampling: caps.sampling !== undefined,
      samplingTools: (caps.sampling as { tools?: unknown } | undefined)?.tools !== undefined,
      // An empty `elicitation: {}` is form mode (the spec's default for clients that say no more).
      elicitation: {
        form: elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined),
        url: elicitation?.url !== undefined,
      },
    };
    const info = server.getClientVersion();
    this.client = { name: info?.name ?? 'unknown', version: info?.version ?? '' };
    this.caller = caller;
    this.#extra = extra;
    this.#session = session;
    this.#timeoutMs = timeoutMs;
    this.#token = extra._meta?.progressToken;
  }

  /** The call answered: nothing more goes to the client through this channel. */
  close(): void {
    this.#open = false;
  }

  createMessage(params: CreateMessageRequestParams, signal?: AbortSignal): Promise<CreateMessageResult> {
    if (!this.offers.sampling) return Promise.reject(this.#lacks('sampling'));
    const schema = params.tools ? CreateMessageResultWithToolsSchema : CreateMessageResultSchema;
    return this.#ask('sampling/createMessage', params, schema, signal) as Promise<CreateMessageResult>;
  }

  elicit(params: ElicitRequestParams, signal?: AbortSignal): Promise<ElicitResult> {
    const mode = (params as { mode?: string }).mode === 'url' ? 'url' : 'form';
    if (!this.offers.elicitation[mode]) return Promise.reject(this.#lacks(`elicitation (${mode} mode)`));
    return this.#ask('elicitation/create', params, ElicitResultSchema, signal) as Promise<ElicitResult>;
  }

  log(level: LoggingLevel, data: unknown, logger?: string): void {
    if (!this.#open || SEVERITY[level] < SEVERITY[this.#session.level]) return;
    const params: Record<string, unknown> = { level, data: redactKnown(data) };
    if (logger !== undefined) params.logger = logger;
    this.#notify('notifications/message', params);
  }

  progress(progress: number, total?: number, message?: string): void {
    if (!this.#open || this.#token === undefined) return;
    const params: Record<string, unknown> = { progressToken: this.#token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = redactKnown(message);
    this.#notify('notifications/progress', params);
  }

  #notify(method: string, params: Record<string, unknown>): void {
    // A client gone mid-call is no failure of the call: what it would have been told is dropped.
    this.#extra.sendNotification({ method, params }).catch(() => {});
  }

  async #ask(method: string, params: object, schema: unknown, signal?: AbortSignal): Promise<unknown> {
    if (!this.#open) throw this.#gone();
    const signals = signal ? AbortSignal.any([signal, this.#extra.signal]) : this.#extra.signal;
    try {
      return await this.#extra.sendRequest({ method, params: params as Record<string, unknown> }, schema, {
        signal: signals,
        timeout: this.#timeoutMs,
      });
    } catch (error) {
      throw this.#failure(method, error, signal);
    }
  }

  #failure(method: string, error: unknown, signal?: AbortSignal): McpClientError {
    const who = `the MCP client ${this.client.name}`;
    if (this.#extra.signal.aborted || !this.#open) return this.#gone();
    if (signal?.aborted || (error instanceof SdkMcpError && error.code === ErrorCode.RequestTimeout))
      return new McpClientError('mcp.client_timeout', `${who} did not answer ${method} in time`);
    if (error instanceof SdkMcpError && error.code === ErrorCode.ConnectionClosed) return this.#gone();
    const said = error instanceof Error ? error.message : String(error);
    return new McpClientError(
      'mcp.client_refused',
      `${who} answered ${method} with an error: ${redactKnown(said)}`,
    );
  }

  #lacks(what: string): McpClientError {
    return new McpClientError(
      'mcp.client_lacks',
      `the MCP client ${this.client.name} that started this call does not offer ${what}`,
    );
  }

  #gone(): McpClientError {
    return new McpClientError(
      'mcp.client_gone',
      `the MCP client ${this.client.name} that started this call is gone, or the call has ended`,
    );
  }
}
