/**
 * web_search providers side by side: each turns (query, count) into one HTTP request and the
 * provider's documented JSON answer into `{ title, url, snippet }` hits.
 *
 * - SearxNG (and compatible): GET {url}/search?q=...&format=json -> results[].title/url/content.
 *   The instance must have `json` in `search.formats` of its settings.yml.
 * - Brave Search API: GET {url}/res/v1/web/search?q=...&count=N with X-Subscription-Token ->
 *   web.results[].title/url/description.
 */
import type { WebSearchSection } from '../../src/config/types.ts';
import { SearchError } from '../../src/errors.ts';

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

export interface ProviderRequest {
  url: URL;
  headers: Record<string, string>;
}

export interface SearchProvider {
  readonly name: WebSearchSection['provider'];
  /** Why this provider cannot run with this config and environment, or null. Never includes the key. */
  problem(section: WebSearchSection, env: NodeJS.ProcessEnv): string | null;
  request(query: string, count: number, section: WebSearchSection, env: NodeJS.ProcessEnv): ProviderRequest;
  parse(answer: unknown, count: number): SearchHit[];
  /** A hint for a non-200 status, or null. */
  statusHint(status: number, section: WebSearchSection): string | null;
}

export const BRAVE_DEFAULT_URL = 'https://api.search.brave.com';
/** Longest snippet kept; search engines send a sentence or two, HTML pages sometimes more. */
const MAX_SNIPPET = 500;
const MAX_TITLE = 300;

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  '#39': "'",
};

/** Providers highlight matches with <strong>/<b> and escape entities; an agent wants plain text. */
export function plainText(value: unknown, max: number): string {
  if (typeof value !== 'string') return '';
  const text = value
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*|#39);/gi, (whole, name: string) => {
      const lower = name.toLowerCase();
      if (lower.startsWith('#x')) return safeCodePoint(Number.parseInt(lower.slice(2), 16)) ?? whole;
      if (lower.startsWith('#')) return safeCodePoint(Number.parseInt(lower.slice(1), 10)) ?? whole;
      return ENTITIES[lower] ?? whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function safeCodePoint(n: number): string | undefined {
  return Number.isInteger(n) && n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : undefined;
}

function hits(list: unknown, count: number, snippetKey: string): SearchHit[] {
  if (!Array.isArray(list)) return [];
  const out: SearchHit[] = [];
  for (const item of list) {
    if (out.length >= count) break;
    if (item === null || typeof item !== 'object') continue;
    const r = item as Record<string, unknown>;
    if (typeof r.url !== 'string' || !/^https?:\/\//i.test(r.url)) continue;
    out.push({
      title: plainText(r.title, MAX_TITLE) || r.url,
      url: r.url,
      snippet: plainText(r[snippetKey], MAX_SNIPPET),
    });
  }
  return out;
}

/** `http://host/searx/` + `search` -> `http://host/searx/search` (a base with a path keeps it). */
function endpoint(base: string, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
  url.search = '';
  url.hash = '';
  return url;
}

const searxng: SearchProvider = {
  name: 'searxng',
  problem(section) {
    return section.url
      ? null
      : 'web_search.url is not set; a searxng provider needs the base URL of the instance';
  },
  request(query, _count, section) {
    // SearxNG has no result-count parameter; the first page (about 10-30 hits) is cut to `count`.
    const url = endpoint(section.url!, 'search');
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    return { url, headers: { accept: 'application/json' } };
  },
  parse(answer, count) {
    if (
      answer === null ||
      typeof answer !== 'object' ||
      !Array.isArray((answer as { results?: unknown }).results)
    ) {
      throw new SearchError(
        'search.bad_response',
        'the searxng answer has no results list (is this a SearxNG JSON endpoint?)',
      );
    }
    return hits((answer as { results: unknown[] }).results, count, 'content');
  },
  statusHint(status) {
    if (status === 403)
      return 'the instance may not allow format=json; add json to search.formats in its settings.yml';
    if (status === 429) return 'the instance is rate limiting this client (its limiter); try again later';
    return null;
  },
};

const brave: SearchProvider = {
  name: 'brave',
  problem(section, env) {
    if (!section.api_key_env)
      return 'web_search.api_key_env is not set; the brave provider needs the name of the environment variable holding the API key';
    if (!env[section.api_key_env])
      return `the environment variable ${section.api_key_env} (web_search.api_key_env) is not set or empty`;
    return null;
  },
  request(query, count, section, env) {
    const url = endpoint(section.url ?? BRAVE_DEFAULT_URL, 'res/v1/web/search');
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(count));
    return {
      url,
      headers: { accept: 'application/json', 'x-subscription-token': env[section.api_key_env!] ?? '' },
    };
  },
  parse(answer, count) {
    if (answer === null || typeof answer !== 'object') {
      throw new SearchError('search.bad_response', 'the Brave answer is not a JSON object');
    }
    const web = (answer as { web?: { results?: unknown } }).web;
    // No `web` section is Brave's way of saying "no web results" for this query.
    return hits(web?.results ?? [], count, 'description');
  },
  statusHint(status, section) {
    if (status === 401 || status === 403)
      return `check the API key in the environment variable ${section.api_key_env}`;
    if (status === 422) return 'Brave refused the request parameters (query too long or malformed?)';
    if (status === 429) return "the Brave plan's rate limit or quota is exhausted; try again later";
    return null;
  },
};

export const PROVIDERS: Readonly<Record<WebSearchSection['provider'], SearchProvider>> = { searxng, brave };
