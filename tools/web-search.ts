/**
 * web_search: asks the search provider configured in organism.yaml (`web_search:` section) and
 * returns title, url and snippet per hit. The provider URL is the operator's choice, not the
 * agent's, so it is not put through the web guard (a SearxNG on localhost is a normal set-up); the
 * agent only supplies the query. The API key is read from the environment at each call and is only
 * ever put in the request header.
 */
import { schemaDefault } from '../src/config/schema.ts';
import type { WebSearchSection } from '../src/config/types.ts';
import { SearchError } from '../src/errors.ts';
import type { ToolDefinition, ToolRunContext, ToolServices } from '../src/tools/types.ts';
import { discard, readCapped } from './lib/net-body.ts';
import { toNetworkError } from './lib/net-errors.ts';
import { undici } from './lib/net-pin.ts';
import { PROVIDERS, type SearchHit, type SearchProvider } from './lib/net-search.ts';

export interface WebSearchArgs {
  query: string;
  num_results?: number;
}

export interface WebSearchResult {
  results: SearchHit[];
  provider: string;
}

export const SEARCH_DEFAULTS = Object.freeze({
  numResults: 5,
  maxResults: 20,
  maxQueryLength: 400,
  /** A page of search results is tens of KiB; anything near this is not a search answer. */
  maxAnswerBytes: 4 * 1024 * 1024,
});

/** The provider and section to use, or the reason there is none. */
function configured(
  services: ToolServices,
): { provider: SearchProvider; section: WebSearchSection } | string {
  const section = services.config.web_search as WebSearchSection | undefined;
  if (!section) {
    return 'web_search is not configured: add a web_search section to organism.yaml (provider: searxng with url, or provider: brave with api_key_env)';
  }
  const provider = Object.hasOwn(PROVIDERS, section.provider) ? PROVIDERS[section.provider] : undefined;
  if (!provider)
    return `web_search.provider ${JSON.stringify(section.provider)} is not one of ${Object.keys(PROVIDERS).join(', ')}`;
  const problem = provider.problem(section, services.env ?? process.env);
  return problem ?? { provider, section };
}

const webSearch: ToolDefinition<WebSearchArgs, WebSearchResult> = {
  name: 'web_search',
  description:
    'Search the web and return the top hits as {title, url, snippet}, best first. Use it to find ' +
    'pages about something you do not know or that may have changed recently; then read a promising ' +
    'page with fetch_url if you have it. Write the query as you would in a search engine (keywords, ' +
    'quoted phrases). num_results is 1 to 20 (default 5). Example: {"query": "node.js 22 release ' +
    'date", "num_results": 3}.',
  args: {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        minLength: 1,
        maxLength: SEARCH_DEFAULTS.maxQueryLength,
        pattern: '\\S',
        description: 'What to search for.',
      },
      num_results: {
        type: 'integer',
        minimum: 1,
        maximum: SEARCH_DEFAULTS.maxResults,
        default: SEARCH_DEFAULTS.numResults,
        description: 'How many hits to return (1-20, default 5).',
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  readOnly: true,
  capability: 'fetch_web',
  source: 'native',
  config: { type: 'object', properties: {} },
  unavailable(services: ToolServices): string | null {
    const found = configured(services);
    return typeof found === 'string' ? found : null;
  },
  async run(args: WebSearchArgs, ctx: ToolRunContext): Promise<WebSearchResult> {
    const found = configured(ctx.services);
    if (typeof found === 'string') throw new SearchError('search.not_configured', found);
    const { provider, section } = found;
    const query = typeof args.query === 'string' ? args.query.trim() : '';
    if (query === '') throw new SearchError('search.bad_query', 'the query is empty');
    if (query.length > SEARCH_DEFAULTS.maxQueryLength) {
      throw new SearchError(
        'search.bad_query',
        `the query is longer than ${SEARCH_DEFAULTS.maxQueryLength} characters`,
      );
    }
    const count = args.num_results ?? SEARCH_DEFAULTS.numResults;
    if (!Number.isInteger(count) || count < 1 || count > SEARCH_DEFAULTS.maxResults) {
      throw new SearchError(
        'search.bad_query',
        `num_results must be a whole number from 1 to ${SEARCH_DEFAULTS.maxResults}`,
      );
    }
    const timeoutMs = section.timeout_ms ?? schemaDefault<number>('web_search.timeout_ms');
    const { url, headers } = provider.request(query, count, section, ctx.services.env ?? process.env);
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([ctx.signal, deadline]);
    const failure = { origin: url.origin, timeoutMs, callSignal: ctx.signal, deadline };
    let status: number;
    let bytes: Buffer;
    try {
      const res = await undici().request(url, {
        method: 'GET',
        headers,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = res.statusCode;
      if (status !== 200) {
        discard(res.body);
      } else {
        const read = await readCapped(res.body, SEARCH_DEFAULTS.maxAnswerBytes);
        if (read.truncated) {
          throw new SearchError(
            'search.bad_response',
            `the ${provider.name} answer is larger than ${SEARCH_DEFAULTS.maxAnswerBytes} bytes`,
          );
        }
        bytes = read.bytes;
      }
    } catch (error) {
      throw toNetworkError(error, failure);
    }
    if (status !== 200) {
      const hint = provider.statusHint(status, section);
      throw new SearchError(
        'search.provider_status',
        `the ${provider.name} search provider at ${url.origin} answered HTTP ${status}${hint ? `: ${hint}` : ''}`,
        { status, provider: provider.name },
      );
    }
    let answer: unknown;
    try {
      answer = JSON.parse(bytes!.toString('utf8'));
    } catch {
      throw new SearchError(
        'search.bad_response',
        `the ${provider.name} answer from ${url.origin} is not JSON`,
      );
    }
    return { results: provider.parse(answer, count), provider: provider.name };
  },
};

export default webSearch;
