/**
 * The eXist-db backend over its REST API (http.ts for the wire, query-body.ts / result.ts for the
 * XML on it). At start it creates the default collection when missing and makes sure it has a
 * Lucene index (index-config.ts); that work runs once, in the background, and is retried on the
 * next call when the server was unreachable.
 */
import { parseXmlDocument, serializeToWellFormedString } from 'slimdom';
import { LibrarianError } from '../../src/errors.ts';
import type {
  DeleteResult,
  GetResult,
  LibrarianBackend,
  ListResult,
  QueryOptions,
  QueryResult,
  SearchOptions,
  SearchResult,
  StoreResult,
  Variables,
} from '../backend.ts';
import { isWithin, ROOT } from '../paths.ts';
import { requireSearchTerms } from '../text/tokenize.ts';
import { parseWellFormed } from '../xml-check.ts';
import { existQueryError } from '../xquery-errors.ts';
import { ExistClient, type ExistClientOptions } from './http.ts';
import { ensureCollection, ensureIndex, findIndex, type IndexState } from './index-config.ts';
import { buildQueryBody } from './query-body.ts';
import { type ExistResult, parseCollectionListing, parseException, parseExistResult } from './result.ts';
import { FALLBACK_QUERY, parseFallbackHits, parseSearchHits, SEARCH_QUERY } from './search.ts';

export interface ExistBackendOptions extends ExistClientOptions {
  defaultCollection: string;
}

const IS_COLLECTION = 'declare variable $path external; xmldb:collection-available($path)';

export class ExistBackend implements LibrarianBackend {
  readonly kind = 'exist' as const;
  private readonly client: ExistClient;
  private readonly indexes = new Map<string, Promise<IndexState>>();
  private started: Promise<void> | undefined;

  constructor(private readonly options: ExistBackendOptions) {
    this.client = new ExistClient(options);
  }

  /** Creates the default collection and its index; safe to call again after a failure. */
  start(signal?: AbortSignal): Promise<void> {
    this.started ??= (async () => {
      await ensureCollection(this.client, this.options.defaultCollection, signal);
      await this.indexFor(this.options.defaultCollection, signal);
    })().catch((error) => {
      this.started = undefined;
      throw error;
    });
    return this.started;
  }

  /**
   * The index state for `collection`: the default collection's (installed at start when missing)
   * for it and everything below; for any other, whatever collection.xconf covers it, as found.
   */
  private indexFor(collection: string, signal?: AbortSignal): Promise<IndexState> {
    const managed = isWithin(collection, this.options.defaultCollection);
    const key = managed ? this.options.defaultCollection : collection;
    let state = this.indexes.get(key);
    if (!state) {
      state = managed ? ensureIndex(this.client, key, signal) : findIndex(this.client, key, signal);
      this.indexes.set(key, state);
      state.catch(() => this.indexes.delete(key));
    }
    return state;
  }

  private async run(
    query: string,
    collection: string,
    variables: Variables,
    max: number,
    signal?: AbortSignal,
  ): Promise<ExistResult> {
    const response = await this.client.request('POST', collection, {
      body: buildQueryBody(query, { variables, max }),
      contentType: 'application/xml',
      signal,
    });
    if (response.status === 200) return parseExistResult(response.body);
    if (response.status === 400) {
      const message = parseException(response.body);
      if (message !== null) throw existQueryError(message, 400);
    }
    throw this.client.failure(response, collection, 'query');
  }

  async store(path: string, content: string, signal?: AbortSignal): Promise<StoreResult> {
    parseWellFormed(content);
    await this.start(signal).catch(() => {});
    const response = await this.client.request('PUT', path, {
      body: content,
      contentType: 'application/xml',
      signal,
    });
    // eXist answers 201 Created for a new or replaced document.
    if (response.status !== 201 && response.status !== 200)
      throw this.client.failure(response, path, 'store');
    return { path };
  }

  async get(path: string, signal?: AbortSignal): Promise<GetResult> {
    const response = await this.client.request('GET', path, { query: { _indent: 'no' }, signal });
    if (response.status !== 200) throw this.client.failure(response, path, 'read');
    if (parseCollectionListing(response.body, path)) {
      throw new LibrarianError(
        'librarian.invalid_argument',
        `${path} is a collection, not a document; use librarian_list`,
        { path },
      );
    }
    try {
      return { path, content: serializeToWellFormedString(parseXmlDocument(response.body)) };
    } catch {
      // Not XML (a binary resource someone else stored): hand it over as eXist sent it.
      return { path, content: response.body };
    }
  }

  async query(query: string, options: QueryOptions): Promise<QueryResult> {
    const result = await this.run(
      query,
      options.collection,
      options.variables ?? {},
      options.maxResults,
      options.signal,
    );
    return { hits: result.hits, results: result.items.slice(0, options.maxResults) };
  }

  async search(terms: string, options: SearchOptions): Promise<SearchResult> {
    const words = requireSearchTerms(terms);
    await this.start(options.signal).catch(() => {});
    const state = await this.indexFor(options.collection, options.signal);
    const variables = { collection: options.collection, terms: words, max: options.limit };
    if (state.indexed) {
      const result = await this.run(
        SEARCH_QUERY,
        options.collection,
        variables,
        options.limit,
        options.signal,
      );
      return { results: parseSearchHits(result.items) };
    }
    const result = await this.run(
      FALLBACK_QUERY,
      options.collection,
      variables,
      options.limit,
      options.signal,
    );
    return {
      results: parseFallbackHits(result.items, words),
      fallback: `no Lucene index (${state.reason}); ranked by how often the words occur, using contains()`,
    };
  }

  async list(collection: string, signal?: AbortSignal): Promise<ListResult> {
    await this.start(signal).catch(() => {});
    const response = await this.client.request('GET', collection, { query: { _indent: 'no' }, signal });
    if (response.status !== 200) throw this.client.failure(response, collection, 'list');
    const listing = parseCollectionListing(response.body, collection);
    if (!listing) {
      throw new LibrarianError(
        'librarian.invalid_argument',
        `${collection} is a document, not a collection; use librarian_get`,
        {
          path: collection,
        },
      );
    }
    return listing;
  }

  async delete(
    path: string,
    options: { recursive?: boolean; signal?: AbortSignal } = {},
  ): Promise<DeleteResult> {
    const probe = await this.run(IS_COLLECTION, ROOT, { path }, 1, options.signal);
    const isCollection = probe.items[0] === 'true';
    if (isCollection && path === ROOT)
      throw new LibrarianError('librarian.denied', 'the root collection /db cannot be deleted');
    if (isCollection && !options.recursive) {
      throw new LibrarianError(
        'librarian.invalid_argument',
        `${path} is a collection; pass recursive: true to delete it with everything in it`,
        {
          path,
        },
      );
    }
    const response = await this.client.request('DELETE', path, { signal: options.signal });
    if (response.status !== 200 && response.status !== 204)
      throw this.client.failure(response, path, 'delete');
    return { path, deleted: isCollection ? 'collection' : 'document' };
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
