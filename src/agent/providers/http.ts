/**
 * The one way providers talk HTTP: a JSON POST over undici, with a timeout, and every failure
 * classified into an LlmError that says whether a retry may help (429, 5xx, network) and what the
 * server's retry-after was. Error text from a provider is cut short and scrubbed of the API key, so
 * a server echoing the key back cannot put it into a log or a thread.
 */
import { knownSecrets } from '../../audit/redact.ts';
import { LlmError } from '../../errors.ts';
import { lazyRequire } from '../../lazy-require.ts';
import type { CallOptions, CompletionRequest, CompletionTurn, Provider } from '../types.ts';

/** undici on the first call to a model over HTTP (the scripted provider makes none). */
const undici = lazyRequire<typeof import('undici')>('undici');

export interface PostJsonOptions {
  /** Provider label for messages, e.g. `anthropic/claude-sonnet-4-5`. */
  label: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal;
  timeoutMs: number;
  /** Strings that must never appear in an error (the API key). */
  secrets: readonly string[];
}

/** What differs between providers that make one JSON POST per model call: their wire format. */
export interface JsonProviderSpec {
  kind: string;
  model: string;
  url: string;
  /** The API key, if the provider sends one: registered as a secret and kept out of every error. */
  apiKey?: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** The request body without the functions. */
  body(request: CompletionRequest): Record<string, unknown>;
  /** The functions as the API wants them under `tools` (only asked when there are any). */
  tools(functions: CompletionRequest['functions']): unknown[];
  /** The answer as a turn. */
  parse(answer: unknown, label: string): CompletionTurn;
}

/** A Provider over postJson: `kind/model` as label, the key kept secret, `tools` only when offered. */
export function jsonProvider(spec: JsonProviderSpec): Provider {
  const label = `${spec.kind}/${spec.model}`;
  const secrets = spec.apiKey ? [spec.apiKey] : [];
  knownSecrets.add(spec.apiKey);
  return {
    kind: spec.kind,
    model: spec.model,
    label,
    async complete(request: CompletionRequest, signal: AbortSignal): Promise<CompletionTurn> {
      const body = spec.body(request);
      if (request.functions.length > 0) body.tools = spec.tools(request.functions);
      const answer = await postJson(spec.url, {
        label,
        headers: spec.headers,
        body,
        signal,
        timeoutMs: spec.timeoutMs,
        secrets,
      });
      return spec.parse(answer, label);
    },
  };
}

/** `temperature` and `top_p` as every provider's wire names them, only those that are set. */
export function sampling(options: CallOptions | undefined): { temperature?: number; top_p?: number } {
  return {
    ...(options?.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options?.topP === undefined ? {} : { top_p: options.topP }),
  };
}

/** Functions as OpenAI-style `tools` (OpenAI, compatible servers, Ollama). */
export function functionTools(functions: CompletionRequest['functions']): unknown[] {
  return functions.map((f) => ({
    type: 'function',
    function: { name: f.name, description: f.description, parameters: f.parameters },
  }));
}

const ERROR_TEXT_CHARS = 300;

export async function postJson(url: string, options: PostJsonOptions): Promise<unknown> {
  const { label, signal } = options;
  if (signal.aborted) throw aborted(label);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const combined = AbortSignal.any([signal, timeout]);
  let response: Awaited<ReturnType<typeof import('undici').request>>;
  try {
    response = await undici().request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
      body: JSON.stringify(options.body),
      signal: combined,
    });
  } catch (error) {
    if (signal.aborted) throw aborted(label);
    if (timeout.aborted) throw timedOut(label, options.timeoutMs);
    const code = (error as { code?: string }).code ?? (error as Error).name;
    throw new LlmError('llm.network', `${label}: cannot reach the API (${code})`, {
      retryable: true,
      details: { backend: label, cause: code },
    });
  }
  let text: string;
  try {
    text = await response.body.text();
  } catch {
    if (signal.aborted) throw aborted(label);
    if (timeout.aborted) throw timedOut(label, options.timeoutMs);
    throw new LlmError('llm.network', `${label}: the connection broke while reading the answer`, {
      retryable: true,
      details: { backend: label },
    });
  }
  const status = response.statusCode;
  if (status < 200 || status >= 300)
    throw statusError(label, status, response.headers, text, options.secrets);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new LlmError(
      'llm.bad_response',
      `${label}: the answer is not JSON: ${clip(text, options.secrets)}`,
      {
        details: { backend: label },
      },
    );
  }
}

function aborted(label: string): LlmError {
  return new LlmError('llm.aborted', `${label}: the request was aborted`, { details: { backend: label } });
}

function timedOut(label: string, ms: number): LlmError {
  return new LlmError('llm.timeout', `${label}: no answer within ${ms} ms`, {
    retryable: true,
    details: { backend: label, ms },
  });
}

type Headers = Record<string, string | string[] | undefined>;

function statusError(
  label: string,
  status: number,
  headers: Headers,
  text: string,
  secrets: readonly string[],
) {
  const detail = errorDetail(text, secrets);
  const details = { backend: label, status };
  if (status === 429) {
    const retryAfterMs = retryAfter(headers);
    return new LlmError('llm.rate_limited', `${label}: rate limited (HTTP 429)${detail}`, {
      retryable: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      details,
    });
  }
  if (status >= 500 || status === 408) {
    const retryAfterMs = retryAfter(headers);
    return new LlmError('llm.server', `${label}: server error (HTTP ${status})${detail}`, {
      retryable: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      details,
    });
  }
  return new LlmError('llm.http', `${label}: request refused (HTTP ${status})${detail}`, { details });
}

/** retry-after-ms (OpenAI), else retry-after in seconds or as an HTTP date. */
export function retryAfter(headers: Headers, now = Date.now()): number | undefined {
  const first = (name: string): string | undefined => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const ms = first('retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = first('retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The provider's own error message when the body has one (`{error: {message}}` or `{error: "..."}`). */
function errorDetail(text: string, secrets: readonly string[]): string {
  let message: string | undefined;
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = body.error;
    if (typeof error === 'string') message = error;
    else if (
      error &&
      typeof error === 'object' &&
      typeof (error as { message?: unknown }).message === 'string'
    )
      message = (error as { message: string }).message;
    else if (typeof body.message === 'string') message = body.message;
  } catch {
    message = text;
  }
  return message && message.trim() !== '' ? `: ${clip(message, secrets)}` : '';
}

/** Short, single-line and with every secret replaced. */
export function clip(text: string, secrets: readonly string[]): string {
  let out = redactSecrets(text, secrets).replace(/\s+/g, ' ').trim();
  if (out.length > ERROR_TEXT_CHARS) out = `${out.slice(0, ERROR_TEXT_CHARS)}...`;
  return out;
}

/**
 * `text` with every form of `secrets` and of the process's known secrets replaced: the key itself,
 * its prefixes of 8+ characters, other letter case, base64/base64url, without `sk-` (see
 * secretForms in audit/redact.ts). The provider's own key is registered on first use, so later
 * calls reuse the registry's compiled matcher.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  for (const secret of secrets) knownSecrets.add(secret);
  return knownSecrets.redact(text, '[redacted]');
}

/** `base` without a trailing slash, joined with `path`. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}
