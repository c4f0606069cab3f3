/**
 * The embedded librarian: documents on disk (DiskStore), a BM25 inverted index for search rebuilt
 * from the files at open (so the documents are the only state that must survive a restart), and
 * XQuery through fontoxpath on a worker thread (QueryRunner), which keeps its own parsed copy of
 * the documents. Changes go through one queue, so the files, the index and the worker's copy never
 * disagree about what a completed call did.
 */
import { serializeToWellFormedString } from 'slimdom';
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
import { isWithin, joinPath, parentOf, ROOT } from '../paths.ts';
import { findWrites } from '../readonly.ts';
import { documentText } from '../text/extract.ts';
import { InvertedIndex } from '../text/index.ts';
import { rankedResults } from '../text/ranked.ts';
import { requireSearchTerms } from '../text/tokenize.ts';
import { parseWellFormed } from '../xml-check.ts';
import { DiskStore } from './disk.ts';
import { QueryRunner } from './query-runner.ts';

export interface EmbeddedOptions {
  /** Folder holding the store (`<data_dir>/librarian`). */
  dir: string;
  /** Created at open so a fresh organism can list it. */
  defaultCollection: string;
  /** Backstop for a query no signal stops (default 60 s; the runtime's timeout usually comes first). */
  maxQueryMs?: number;
  /** Heap limit of the query thread in MB (default 1024). */
  maxQueryHeapMb?: number;
}

interface Entry {
  /** The document as get returns it (serialized, no XML declaration). */
  content: string;
  /** Its searchable text, for snippets. */
  text: string;
}

function notFound(path: string): LibrarianError {
  return new LibrarianError('librarian.not_found', `not found: ${path}`, { path });
}

export class EmbeddedBackend implements LibrarianBackend {
  readonly kind = 'embedded' as const;
  private readonly disk: DiskStore;
  private readonly docs = new Map<string, Entry>();
  private readonly index = new InvertedIndex();
  private readonly runner: QueryRunner;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(options: EmbeddedOptions) {
    this.disk = new DiskStore(options.dir);
    this.runner = new QueryRunner({
      dir: options.dir,
      maxQueryMs: options.maxQueryMs ?? 60_000,
      maxHeapMb: options.maxQueryHeapMb ?? 1024,
    });
  }

  /** Opens (or creates) the store and indexes every document on disk. */
  static async open(options: EmbeddedOptions): Promise<EmbeddedBackend> {
    const backend = new EmbeddedBackend(options);
    await backend.disk.ensureCollection(options.defaultCollection);
    for (const path of await backend.disk.walk(ROOT, { sweep: true })) {
      const content = await backend.disk.read(path);
      if (content === null) continue;
      try {
        backend.remember(path, content);
      } catch {
        // A file that no longer parses (edited by hand) is skipped rather than blocking the store.
      }
    }
    return backend;
  }

  private remember(path: string, content: string): void {
    const doc = parseWellFormed(content, path);
    const text = documentText(doc);
    this.docs.set(path, { content: serializeToWellFormedString(doc), text });
    this.index.set(path, text);
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => {});
    return next;
  }

  async store(path: string, content: string): Promise<StoreResult> {
    parseWellFormed(content);
    return this.exclusive(async () => {
      if ((await this.disk.kind(path)) === 'collection') {
        throw new LibrarianError(
          'librarian.conflict',
          `cannot store a document at ${path}: it is a collection`,
          { path },
        );
      }
      await this.disk.ensureCollection(parentOf(path));
      await this.disk.write(path, content);
      this.remember(path, content);
      this.runner.notify({ type: 'set', path, content });
      return { path };
    });
  }

  async get(path: string): Promise<GetResult> {
    const entry = this.docs.get(path);
    if (!entry) {
      if ((await this.disk.kind(path)) === 'collection') {
        throw new LibrarianError(
          'librarian.invalid_argument',
          `${path} is a collection, not a document; use librarian_list`,
          { path },
        );
      }
      throw notFound(path);
    }
    return { path, content: entry.content };
  }

  async query(query: string, options: QueryOptions): Promise<QueryResult> {
    const canRead = options.canRead;
    const readable = canRead ? [...this.docs.keys()].filter((p) => canRead(p)) : null;
    try {
      return await this.runner.query(
        {
          query,
          collection: options.collection,
          variables: options.variables,
          maxResults: options.maxResults,
          readable,
        },
        options.signal,
      );
    } catch (error) {
      // With allow_updates the read-only check is skipped, but fontoxpath has no xmldb module and
      // no persistent updates: say that rather than "prefix xmldb could not be resolved".
      if (!(error instanceof LibrarianError) || error.code !== 'librarian.query') throw error;
      let writes: string[] = [];
      try {
        writes = findWrites(query);
      } catch {
        // Not parseable: the original error says where.
      }
      if (writes.length === 0) throw error;
      throw new LibrarianError(
        'librarian.read_only',
        `the embedded librarian runs read-only queries only (this one uses ${writes.slice(0, 3).join(', ')}); ` +
          'use librarian_store and librarian_delete to change documents, or the exist backend for updating queries',
        { found: writes },
      );
    }
  }

  async search(terms: string, options: SearchOptions): Promise<SearchResult> {
    const words = requireSearchTerms(terms);
    return rankedResults(
      this.index,
      words,
      (p) => isWithin(p, options.collection),
      options.limit,
      (path) => this.docs.get(path)?.text ?? '',
    );
  }

  async list(collection: string): Promise<ListResult> {
    const kind = await this.disk.kind(collection);
    if (kind === 'document') {
      throw new LibrarianError(
        'librarian.invalid_argument',
        `${collection} is a document, not a collection; use librarian_get`,
        {
          path: collection,
        },
      );
    }
    if (kind !== 'collection') throw notFound(collection);
    const { collections, documents } = await this.disk.list(collection);
    return {
      collection,
      collections: collections.map((name) => ({ name, path: joinPath(collection, name) })),
      documents: documents.map((name) => ({ name, path: joinPath(collection, name) })),
    };
  }

  async delete(path: string, options: { recursive?: boolean } = {}): Promise<DeleteResult> {
    return this.exclusive(async () => {
      const kind = await this.disk.kind(path);
      if (kind === null) throw notFound(path);
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
      await this.disk.remove(path);
      for (const p of [...this.docs.keys()]) {
        if (isWithin(p, path)) {
          this.docs.delete(p);
          this.index.remove(p);
        }
      }
      this.runner.notify({ type: 'delete', path });
      return { path, deleted: kind };
    });
  }

  async close(): Promise<void> {
    await this.queue;
    await this.runner.close();
  }
}
