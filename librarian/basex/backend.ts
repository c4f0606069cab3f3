/**
 * The BaseX backend: a BaseX server (`basexserver`) over its client/server protocol (client.ts).
 * All documents live in one BaseX database named `db`, a document at /db/organism/notes/a.xml under
 * the database path organism/notes/a.xml; BaseX then resolves collection('/db/organism/notes') and
 * doc('/db/organism/notes/a.xml') exactly as eXist does, and document-uri() gives the same path.
 *
 * A query runs in two steps: the text is parsed on its own (the protocol's UPDATING request, which
 * compiles without evaluating), so a syntax error comes back with its line and column; then it is
 * evaluated through xquery:eval with read permission, so fn:doc/collection/unparsed-text cannot
 * reach the server's file system whatever user the backend logs in as. BaseX has no empty
 * collections: a collection exists while a document is under it; the default collection and its
 * ancestors always exist.
 */
import { parseXmlDocument } from 'slimdom';
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
} from '../backend.ts';
import { isWithin, joinPath, ROOT } from '../paths.ts';
import { documentText } from '../text/extract.ts';
import { InvertedIndex } from '../text/index.ts';
import { rankedResults } from '../text/ranked.ts';
import { requireSearchTerms } from '../text/tokenize.ts';
import { typeVariables } from '../variables.ts';
import { parseWellFormed } from '../xml-check.ts';
import { BasexClient, type BasexItem, BasexServerError } from './client.ts';
import { basexQueryError } from './errors.ts';
import { basexItem } from './items.ts';

export interface BasexBackendOptions {
  host: string;
  port: number;
  user: string;
  /** Read when a connection opens. */
  password: () => string;
  defaultCollection: string;
  /** Evaluation limit of one query in seconds, enforced by BaseX (default 60). */
  queryTimeoutS?: number;
}

/** The BaseX database holding every document: its name is the root collection's. */
const DATABASE = ROOT.slice(1);

/** Session options: no indentation added, whitespace kept, no XInclude or DTD processing. */
const SESSION_SETUP = ['SET SERIALIZER indent=no', 'SET CHOP false', 'SET XINCLUDE false', 'SET DTD false'];

/** The path inside the database of a librarian path (/db/a/b.xml -> a/b.xml). */
function dbPath(path: string): string {
  return path === ROOT ? '' : path.slice(ROOT.length + 1);
}

function libraryPath(db: string): string {
  return `${ROOT}/${db}`;
}

function stringVar(name: string, value: string) {
  return { name, value, type: 'xs:string' };
}

export class BasexBackend implements LibrarianBackend {
  readonly kind = 'basex' as const;
  private readonly client: BasexClient;
  private started: Promise<void> | undefined;

  constructor(private readonly options: BasexBackendOptions) {
    this.client = new BasexClient(
      { host: options.host, port: options.port, user: options.user, password: options.password },
      SESSION_SETUP,
    );
  }

  /** Creates the database when missing; safe to call again after a failure. */
  start(signal?: AbortSignal): Promise<void> {
    this.started ??= this.client
      .query(`if (db:exists('${DATABASE}')) then () else db:create('${DATABASE}')`, [], signal)
      .then(() => {})
      .catch((error) => {
        this.started = undefined;
        throw this.wrap(error, 'create the database');
      });
    return this.started;
  }

  private wrap(error: unknown, action: string): Error {
    if (error instanceof BasexServerError) {
      return new LibrarianError(
        'librarian.backend',
        `BaseX at ${this.client.address} could not ${action}: ${error.message}`,
      );
    }
    return error as Error;
  }

  private async admin(
    query: string,
    bind: { name: string; value: string; type: string }[],
    action: string,
    signal?: AbortSignal,
  ): Promise<BasexItem[]> {
    await this.start(signal);
    try {
      return await this.client.query(query, bind, signal);
    } catch (error) {
      throw this.wrap(error, action);
    }
  }

  /** 'document', 'collection' or null for a librarian path. */
  private async kindOf(path: string, signal?: AbortSignal): Promise<'document' | 'collection' | null> {
    if (isWithin(this.options.defaultCollection, path)) return 'collection';
    const [kind] = await this.admin(
      `declare variable $p external;
       let $all := db:list('${DATABASE}', $p)
       return if ($all = $p) then 'document' else if (exists($all)) then 'collection' else ''`,
      [stringVar('p', dbPath(path))],
      `look up ${path}`,
      signal,
    );
    return kind?.value === 'document' || kind?.value === 'collection' ? kind.value : null;
  }

  async store(path: string, content: string, signal?: AbortSignal): Promise<StoreResult> {
    parseWellFormed(content);
    if ((await this.kindOf(path, signal)) === 'collection') {
      throw new LibrarianError(
        'librarian.conflict',
        `cannot store a document at ${path}: it is a collection`,
        {
          path,
        },
      );
    }
    await this.admin(
      `declare variable $p external; declare variable $x external; db:replace('${DATABASE}', $p, parse-xml($x))`,
      [stringVar('p', dbPath(path)), stringVar('x', content)],
      `store ${path}`,
      signal,
    );
    return { path };
  }

  async get(path: string, signal?: AbortSignal): Promise<GetResult> {
    const kind = await this.kindOf(path, signal);
    if (kind === 'collection') {
      throw new LibrarianError(
        'librarian.invalid_argument',
        `${path} is a collection, not a document; use librarian_list`,
        { path },
      );
    }
    if (kind === null) throw new LibrarianError('librarian.not_found', `not found: ${path}`, { path });
    const [doc] = await this.admin(
      `declare variable $p external; db:open('${DATABASE}', $p)`,
      [stringVar('p', dbPath(path))],
      `read ${path}`,
      signal,
    );
    if (!doc) throw new LibrarianError('librarian.not_found', `not found: ${path}`, { path });
    return { path, content: doc.value };
  }

  async query(query: string, options: QueryOptions): Promise<QueryResult> {
    await this.start(options.signal);
    const typed = typeVariables(options.variables);
    // Step 1: parse only. A static error here carries its own line and column.
    let updating: string;
    try {
      updating = await this.client.parseOnly(query, options.signal);
    } catch (error) {
      if (error instanceof BasexServerError) throw basexQueryError(error.message, true);
      throw error;
    }
    if (updating === 'true') {
      throw new LibrarianError(
        'librarian.read_only',
        'the BaseX backend runs read-only queries only (this one is an updating query); ' +
          'use librarian_store and librarian_delete to change documents',
      );
    }
    // Step 2: evaluate with read permission; variables are bound to the outer query as typed
    // values and handed over in the bindings map, never pasted into any query text.
    const declarations = typed.map((_, i) => `declare variable $v${i} external;`).join(' ');
    const bindings = typed.map((v, i) => `'${v.name}': $v${i}`).join(', ');
    const timeout = this.options.queryTimeoutS ?? 60;
    const outer =
      `declare variable $q external; declare variable $max external; ${declarations} ` +
      `let $r := xquery:eval($q, map{${bindings}}, map{'permission': 'read', 'timeout': ${timeout}}) ` +
      // Maps and arrays come back as JSON (there is no XML for them); binary values by their string
      // value (BaseX would send their bytes); everything else as it is.
      `return (count($r), for $i in subsequence($r, 1, $max) return ` +
      `if ($i instance of map(*) or $i instance of array(*)) then serialize($i, map{'method': 'json', 'indent': 'no'}) ` +
      `else if ($i instance of xs:hexBinary or $i instance of xs:base64Binary) then string($i) else $i)`;
    const bind = [
      stringVar('q', query),
      { name: 'max', value: String(Math.max(0, Math.floor(options.maxResults))), type: 'xs:integer' },
      ...typed.map((v, i) =>
        // A sequence travels as items separated by \1, each with its type after \2; an empty one
        // as such (as the items above it would be one empty untyped value).
        v.values.length === 0
          ? { name: `v${i}`, value: '', type: 'empty-sequence()' }
          : {
              name: `v${i}`,
              value: v.lexical.map((value) => `${value}\u0002${v.type}`).join('\u0001'),
              type: '',
            },
      ),
    ];
    let items: BasexItem[];
    try {
      items = await this.client.query(outer, bind, options.signal);
    } catch (error) {
      if (error instanceof BasexServerError) throw basexQueryError(error.message, false);
      throw error;
    }
    const [count, ...shown] = items;
    return {
      hits: Number(count?.value ?? 0),
      results: shown.map((item, i) => basexItem(item, i)),
    };
  }

  async search(terms: string, options: SearchOptions): Promise<SearchResult> {
    const words = requireSearchTerms(terms);
    // Ranked here (text/ranked.ts) over the collection's documents, as the embedded store ranks.
    const items = await this.admin(
      `declare variable $c external;
       for $d in db:open('${DATABASE}', $c) return (db:path($d), $d)`,
      [stringVar('c', dbPath(options.collection))],
      `search ${options.collection}`,
      options.signal,
    );
    const index = new InvertedIndex();
    const texts = new Map<string, string>();
    for (let i = 0; i + 1 < items.length; i += 2) {
      const path = libraryPath(items[i]!.value);
      if (!isWithin(path, options.collection)) continue;
      const text = documentText(parseXmlDocument(items[i + 1]!.value));
      texts.set(path, text);
      index.set(path, text);
    }
    return rankedResults(
      index,
      words,
      () => true,
      options.limit,
      (path) => texts.get(path) ?? '',
    );
  }

  async list(collection: string, signal?: AbortSignal): Promise<ListResult> {
    const kind = await this.kindOf(collection, signal);
    if (kind === 'document') {
      throw new LibrarianError(
        'librarian.invalid_argument',
        `${collection} is a document, not a collection; use librarian_get`,
        { path: collection },
      );
    }
    if (kind === null)
      throw new LibrarianError('librarian.not_found', `not found: ${collection}`, { path: collection });
    const all = await this.admin(
      `declare variable $c external; db:list('${DATABASE}', $c)`,
      [stringVar('c', dbPath(collection))],
      `list ${collection}`,
      signal,
    );
    const collections = new Set<string>();
    const documents = new Set<string>();
    for (const item of all) {
      const path = libraryPath(item.value);
      if (!isWithin(path, collection) || path === collection) continue;
      const [first, ...rest] = path.slice(collection.length + 1).split('/');
      if (!first) continue;
      (rest.length > 0 ? collections : documents).add(first);
    }
    // The default collection's ancestors exist even when empty, so the way down to it is listed.
    if (
      isWithin(this.options.defaultCollection, collection) &&
      this.options.defaultCollection !== collection
    ) {
      const below = this.options.defaultCollection.slice(collection.length + 1).split('/')[0];
      if (below) collections.add(below);
    }
    const entries = (names: Set<string>) =>
      [...names].sort().map((name) => ({ name, path: joinPath(collection, name) }));
    return { collection, collections: entries(collections), documents: entries(documents) };
  }

  async delete(
    path: string,
    options: { recursive?: boolean; signal?: AbortSignal } = {},
  ): Promise<DeleteResult> {
    const kind = path === ROOT ? 'collection' : await this.kindOf(path, options.signal);
    if (kind === null) throw new LibrarianError('librarian.not_found', `not found: ${path}`, { path });
    if (kind === 'collection') {
      if (path === ROOT)
        throw new LibrarianError('librarian.denied', 'the root collection /db cannot be deleted');
      if (!options.recursive) {
        throw new LibrarianError(
          'librarian.invalid_argument',
          `${path} is a collection; pass recursive: true to delete it with everything in it`,
          { path },
        );
      }
    }
    await this.admin(
      `declare variable $p external; db:delete('${DATABASE}', $p)`,
      [stringVar('p', dbPath(path))],
      `delete ${path}`,
      options.signal,
    );
    return { path, deleted: kind };
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
