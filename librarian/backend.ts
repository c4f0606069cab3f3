/**
 * The one interface both librarian backends implement (embedded on disk, eXist-db over REST). The
 * librarian_* tools talk only to this; test/librarian/backend.contract.ts runs the same cases
 * against every implementation, so the same call gives the same result whichever is configured.
 *
 * Every path here is absolute and normalized (`/db/organism/notes/a.xml`): the tools resolve
 * relative arguments and enforce allowed_collections before calling a backend.
 */

/** A value bound to an external XQuery variable. Arrays become sequences; all items one type. */
export type VariableValue = string | number | boolean | string[] | number[] | boolean[];

export type Variables = Readonly<Record<string, VariableValue>>;

export interface StoreResult {
  /** Absolute path of the stored document. */
  path: string;
}

export interface GetResult {
  path: string;
  /** The document serialized as XML, without an XML declaration. */
  content: string;
}

export interface QueryOptions {
  /** The collection the query runs against: eXist's POST target, and collection() with no argument. */
  collection: string;
  variables?: Variables;
  /** At most this many items are returned; `hits` still counts them all. */
  maxResults: number;
  /**
   * Which paths collection()/doc() may read, where the backend can enforce it (embedded does; an
   * eXist server reads whatever its user may read).
   */
  canRead?: (path: string) => boolean;
  signal?: AbortSignal;
}

export interface QueryResult {
  /** Total number of items the query produced. */
  hits: number;
  /**
   * Items in order: elements and documents serialized as XML fragments; attributes, text nodes and
   * atomic values as their string value.
   */
  results: string[];
}

export interface SearchOptions {
  collection: string;
  limit: number;
  signal?: AbortSignal;
}

export interface SearchHit {
  path: string;
  /** Relevance, higher is better; comparable only within one result list. */
  score: number;
  /** Text around the first hit, XML-escaped, with the hit wrapped in `<mark>...</mark>`. */
  snippet: string;
}

export interface SearchResult {
  results: SearchHit[];
  /** Set when the backend could not use a full-text index and fell back to plain matching; says why. */
  fallback?: string;
}

export interface ListEntry {
  name: string;
  path: string;
}

export interface ListResult {
  collection: string;
  /** Sub-collections, sorted by name. */
  collections: ListEntry[];
  /** Documents, sorted by name. */
  documents: ListEntry[];
}

export interface DeleteResult {
  path: string;
  deleted: 'document' | 'collection';
}

export interface LibrarianBackend {
  readonly kind: 'embedded' | 'exist' | 'basex';
  /** Stores (or replaces) a document; the content must be well-formed XML without a DOCTYPE. */
  store(path: string, content: string, signal?: AbortSignal): Promise<StoreResult>;
  get(path: string, signal?: AbortSignal): Promise<GetResult>;
  query(query: string, options: QueryOptions): Promise<QueryResult>;
  /** Full-text search over the documents under `collection` (sub-collections included), best first. */
  search(terms: string, options: SearchOptions): Promise<SearchResult>;
  list(collection: string, signal?: AbortSignal): Promise<ListResult>;
  /** Deletes a document, or a collection with everything in it when `recursive` is true. */
  delete(path: string, options?: { recursive?: boolean; signal?: AbortSignal }): Promise<DeleteResult>;
  close(): Promise<void>;
}
