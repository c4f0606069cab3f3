/**
 * fetch_url: one HTTP request to a public web address, under the web guard (net-request), with the
 * response as text or base64.
 */
import { NetworkError } from '../src/errors.ts';
import type { ToolDefinition, ToolRunContext } from '../src/tools/types.ts';
import { decodeBody } from './lib/net-body.ts';
import { NET_DEFAULTS, netConfigSchema, requestOptions, urlArgSchema } from './lib/net-config.ts';
import { checkRequestHeaders, flattenHeaders } from './lib/net-headers.ts';
import { guardedRequest, HTTP_METHODS, type HttpMethod } from './lib/net-request.ts';

export interface FetchUrlArgs {
  url: string;
  method?: HttpMethod;
  headers?: Record<string, string>;
  body?: string;
}

export interface FetchUrlResult {
  status_code: number;
  headers: Record<string, string>;
  body: string;
  body_encoding: 'utf8' | 'base64';
  truncated: boolean;
  final_url: string;
}

/** Request bodies are text; 1 MiB is far beyond what an agent should be composing. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

function methodsAllowed(config: Record<string, unknown>): readonly string[] {
  const value = config.allowed_methods;
  if (value === undefined) return HTTP_METHODS;
  if (!Array.isArray(value) || !value.every((m) => typeof m === 'string')) {
    throw new NetworkError('net.bad_config', 'tool_config allowed_methods must be a list of HTTP methods');
  }
  return value.map((m) => m.toUpperCase());
}

const fetchUrl: ToolDefinition<FetchUrlArgs, FetchUrlResult> = {
  name: 'fetch_url',
  description:
    'Make an HTTP request to a web address and return the response: status_code, headers, body, ' +
    'body_encoding ("utf8" for text, "base64" for binary such as images or PDFs), truncated (true when ' +
    'the body was longer than the size limit and was cut), and final_url (after redirects, which are ' +
    'followed). Use GET to read a page or an API; POST, PUT and DELETE only when you mean to change ' +
    'something. Private and local network addresses are refused unless this listener is configured to ' +
    'allow them. A 4xx/5xx status is returned as a result, not an error. Example: {"url": ' +
    '"https://example.com/api/items?page=2"}.',
  args: {
    type: 'object',
    properties: {
      url: urlArgSchema('Absolute http:// or https:// URL.'),
      method: { enum: [...HTTP_METHODS], default: 'GET', description: 'HTTP method; default GET.' },
      headers: {
        type: 'object',
        maxProperties: 50,
        additionalProperties: { type: 'string', maxLength: 8192 },
        description:
          'Request headers, e.g. {"Accept": "application/json"}. Host, Content-Length and hop-by-hop headers are set for you.',
      },
      body: {
        type: 'string',
        maxLength: MAX_REQUEST_BODY_BYTES,
        description:
          'Request body for POST or PUT (DELETE may have one too). Sent as JSON when it parses as JSON and no Content-Type is given, else as plain text.',
      },
    },
    required: ['url'],
    additionalProperties: false,
  },
  readOnly: false, // POST, PUT and DELETE can change things on the other side
  capability: 'fetch_web',
  source: 'native',
  guard: 'web',
  config: netConfigSchema(NET_DEFAULTS.fetchMaxBytes, {
    allowed_methods: {
      type: 'array',
      items: { enum: [...HTTP_METHODS] },
      uniqueItems: true,
      description: 'Methods this listener may use; unset: all of GET, HEAD, POST, PUT, DELETE.',
    },
  }),
  async run(args: FetchUrlArgs, ctx: ToolRunContext): Promise<FetchUrlResult> {
    const method = (args.method ?? 'GET').toUpperCase() as HttpMethod;
    if (!(HTTP_METHODS as readonly string[]).includes(method)) {
      throw new NetworkError(
        'net.method_not_allowed',
        `method must be one of ${HTTP_METHODS.join(', ')} (got ${args.method})`,
      );
    }
    if (!methodsAllowed(ctx.config).includes(method)) {
      throw new NetworkError(
        'net.method_not_allowed',
        `method ${method} is not allowed for this listener (tool_config allowed_methods: ${methodsAllowed(ctx.config).join(', ')})`,
      );
    }
    const headers = checkRequestHeaders(args.headers);
    let body: Buffer | undefined;
    if (args.body !== undefined) {
      if (method === 'GET' || method === 'HEAD') {
        throw new NetworkError(
          'net.bad_body',
          `a ${method} request cannot have a body; use POST or PUT to send data`,
        );
      }
      body = Buffer.from(args.body, 'utf8');
      if (body.length > MAX_REQUEST_BODY_BYTES) {
        throw new NetworkError(
          'net.bad_body',
          `the body is ${body.length} bytes; the limit is ${MAX_REQUEST_BODY_BYTES}`,
        );
      }
      if (headers['content-type'] === undefined) {
        headers['content-type'] = looksLikeJson(args.body) ? 'application/json' : 'text/plain; charset=utf-8';
      }
    }
    headers['user-agent'] ??= 'Organism-fetch_url/0.1';
    headers.accept ??= '*/*';
    const response = await guardedRequest(
      { url: args.url, method, headers, ...(body === undefined ? {} : { body }) },
      await requestOptions(ctx, NET_DEFAULTS.fetchMaxBytes, 'all'),
    );
    const flat = flattenHeaders(response.headers);
    const decoded = decodeBody(response.bytes, flat['content-type'], response.truncated);
    return {
      status_code: response.status,
      headers: flat,
      body: decoded.body,
      body_encoding: decoded.body_encoding,
      truncated: response.truncated,
      final_url: response.url,
    };
  },
};

function looksLikeJson(text: string): boolean {
  const t = text.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

export default fetchUrl;
