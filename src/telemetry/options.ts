/**
 * What is derived from the `telemetry:` section (its defaults are organism.schema.json's) before
 * anything of OpenTelemetry is loaded: the traces URL and the exporter's headers.
 */
import type { TelemetrySection } from '../config/types.ts';
import { OrganismError } from '../errors.ts';

export type { TelemetrySection };

/** Longest captured content attribute (prompts, arguments, results, payloads), in characters. */
export const CONTENT_LIMIT = 8192;

/** `endpoint` + `/v1/traces`, unless it names that path already. Throws a telemetry.endpoint error. */
export function tracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new OrganismError('telemetry.endpoint', `telemetry.otlp.endpoint '${endpoint}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OrganismError(
      'telemetry.endpoint',
      `telemetry.otlp.endpoint must be an http:// or https:// URL, not ${url.protocol}`,
    );
  if (url.username || url.password)
    throw new OrganismError(
      'telemetry.endpoint',
      'telemetry.otlp.endpoint must not carry user:password; put credentials in the variable otlp.headers_env names',
    );
  if (!url.pathname.endsWith('/v1/traces')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
}

/**
 * The exporter's extra headers from the variable `headers_env` names, in the format of
 * OTEL_EXPORTER_OTLP_HEADERS: `name=value` pairs separated by commas, values URL-encoded.
 * Throws naming the variable (never its value) when a pair does not read.
 */
export function otlpHeaders(name: string | undefined, env: NodeJS.ProcessEnv): Record<string, string> {
  if (name === undefined) return {};
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return {};
  const headers: Record<string, string> = {};
  for (const [index, pair] of raw.split(',').entries()) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    const key = eq > 0 ? pair.slice(0, eq).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key))
      throw new OrganismError(
        'telemetry.headers',
        `${name} (telemetry.otlp.headers_env): entry ${index + 1} is not name=value`,
      );
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      throw new OrganismError(
        'telemetry.headers',
        `${name} (telemetry.otlp.headers_env): the value of ${key} is not URL-encoded text`,
      );
    }
    headers[key] = value;
  }
  return headers;
}
