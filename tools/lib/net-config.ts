/**
 * tool_config keys shared by fetch_url and webhook, their defaults (in one place), and the JSON
 * Schema each tool declares for them.
 */
import type { ToolConfig } from '../../src/config/types.ts';
import { NetworkError } from '../../src/errors.ts';
import type { ToolRunContext } from '../../src/tools/types.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';
import { lookupFrom } from './net-pin.ts';
import type { GuardedRequestOptions } from './net-request.ts';

export const NET_DEFAULTS = Object.freeze({
  /** fetch_url: response body bytes kept. */
  fetchMaxBytes: 1024 * 1024,
  /** webhook: response body bytes kept (a receiver's answer is an acknowledgement, not content). */
  webhookMaxBytes: 64 * 1024,
  maxRedirects: 5,
  /** Used when tool_config has no timeout_ms; the runtime's own timeout also applies through the signal. */
  timeoutMs: 30_000,
  /** Upper bounds an operator may configure. */
  maxBytesLimit: 64 * 1024 * 1024,
  maxRedirectsLimit: 20,
});

/** The `url` argument of fetch_url and webhook. */
export function urlArgSchema(description: string): JsonSchema {
  return { type: 'string', minLength: 1, maxLength: 8192, description };
}

/** The web guard's keys (read by src/guard/web.ts, documented there) plus the transport limits. */
export function netConfigSchema(defaultMaxBytes: number, extra: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: 'object',
    properties: {
      allowed_domains: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        description:
          'Only these hosts may be reached: "example.com" is that host only, "*.example.com" its subdomains (not example.com itself). Unset: any public host. Read by the web guard.',
      },
      blocked_domains: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        description:
          'Hosts never reached, same patterns as allowed_domains, checked first. Read by the web guard.',
      },
      allow_loopback: {
        type: 'boolean',
        default: false,
        description:
          "Allow 127.0.0.0/8, ::1 and localhost (services on this machine), never the daemon's own API. Read by the web guard.",
      },
      allowed_ports: {
        type: 'array',
        items: { type: 'integer', minimum: 1, maximum: 65535 },
        description:
          'Ports the web guard otherwise refuses as non-web services (22, 25, 3306, 5432, 6379, 9200...). Read by the web guard.',
      },
      max_bytes: {
        type: 'integer',
        minimum: 1,
        maximum: NET_DEFAULTS.maxBytesLimit,
        default: defaultMaxBytes,
        description: 'Response body bytes kept; the rest is not downloaded and the result says truncated.',
      },
      max_redirects: {
        type: 'integer',
        minimum: 0,
        maximum: NET_DEFAULTS.maxRedirectsLimit,
        default: NET_DEFAULTS.maxRedirects,
        description: 'Redirects followed, each checked by the web guard; 0 returns the redirect itself.',
      },
      ...extra,
    },
  };
}

export interface NetLimits {
  maxBytes: number;
  maxRedirects: number;
  timeoutMs: number;
}

function integer(config: ToolConfig, key: string, fallback: number, min: number, max: number): number {
  const value = config[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new NetworkError(
      'net.bad_config',
      `tool_config ${key} must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

/** Reads the limits from tool_config with defaults; a bad value is an error rather than silently replaced. */
export function netLimits(config: ToolConfig, defaultMaxBytes: number): NetLimits {
  return {
    maxBytes: integer(config, 'max_bytes', defaultMaxBytes, 1, NET_DEFAULTS.maxBytesLimit),
    maxRedirects: integer(
      config,
      'max_redirects',
      NET_DEFAULTS.maxRedirects,
      0,
      NET_DEFAULTS.maxRedirectsLimit,
    ),
    timeoutMs: integer(config, 'timeout_ms', NET_DEFAULTS.timeoutMs, 1, 24 * 60 * 60 * 1000),
  };
}

/**
 * The guardedRequest options of one fetch_url or webhook call: the limits from its tool_config
 * (netLimits), its signal, and the organism's DNS lookup.
 */
export async function requestOptions(
  ctx: ToolRunContext,
  defaultMaxBytes: number,
  redirects: GuardedRequestOptions['redirects'],
): Promise<GuardedRequestOptions> {
  const limits = netLimits(ctx.config, defaultMaxBytes);
  return {
    toolConfig: ctx.config,
    signal: ctx.signal,
    timeoutMs: limits.timeoutMs,
    maxBytes: limits.maxBytes,
    maxRedirects: limits.maxRedirects,
    redirects,
    lookup: await lookupFrom(ctx.services),
  };
}
