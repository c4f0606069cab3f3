/**
 * The embedded librarian: documents on disk (DiskStore), parsed once into slimdom documents kept
 * in memory, XQuery through fontoxpath (evaluate.ts), and a BM25 inverted index for search that is
 * rebuilt from the files at open, so nothing but the documents themselves needs to survive a
 * restart. Changes are serialized through one queue, so the files, the parsed documents and the
 * index never disagree.
 */
import type { Document } from 'slimdom';
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
import { InvertedIndex, roundScore } from '../text/index.ts';
import { makeSnippet } from '../text/snippet.ts';
import { requireSearchTerms } from '../text/tokenize.ts';
import { parseWellFormed } from '../xml-check.ts';
import { DiskStore } from './disk.ts';
import { evaluateQuery } from './evaluate.ts';
import type { DocumentSource } from './functions.ts';

export interface EmbeddedOptions {
  /** Folder holding the store (`<data_dir>/librarian`). */
  dir: string;
  /** Created at open so a fresh organism can list it. */
  defaultCollection: string;
}

interface Entry {
  doc: Document;
  text: string;
}

function notFound(path: string): LibrarianError {
  return new LibrarianError('librarian.not_found', `not found: ${path}`, { path });
}

export class EmbeddedBackend implements LibrarianBackend, DocumentSource {
  readonly kind = 'embedded' as const;
  private readonly disk: DiskStore;
  private readonly docs = new Map<string, Entry>();
  private readonly paths = new WeakMap<Document, string>();
  private readonly index = new InvertedIndex();
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(options: EmbeddedOptions) {
    this.disk = new DiskStore(options.dir);
  }

  /** Opens (or creates) the store and loads every document and the index from disk. */
  static async open(options: EmbeddedOptions): Promise<EmbeddedBackend> {
    const backend = new EmbeddedBackend(options);
    await backend.disk.ensureCollection(options.defaultCollection);
    for (const path of await backend.disk.walk(ROOT)) {
      const content = await backend.disk.read(path);
      if (content === null) continue;
      try {
        backend.remember(path, parseWellFormed(content, path));
      } catch {
        // A file that no longer parses (edited by hand) is skipped rather than blocking the store.
      }
    }
    return backend;
  }

  private remember(path: string, doc: Document): void {
    const text = documentText(doc);
    this.docs.set(path, { doc, text });
    this.paths.set(doc, path);
    this.index.set(path, text);
  }

  private forget(path: string): void {
    this.docs.delete(path);
    this.index.remove(path);
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => {});
    return next;
  }

  // DocumentSource, read by collection()/doc() during a query. A collection that does not exist
  // holds no documents (an empty sequence rather than an error).
  collectionDocuments(collection: string): Document[] {
    const out: Array<[string, Document]> = [];
    for (const [path, entry] of this.docs)
      if (isWithin(path, collection) && path !== collection) out.push([path, entry.doc]);
    return out.sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, d]) => d);
  }

  document(path: string): Document | null {
    return this.docs.get(path)?.doc ?? null;
  }

  pathOf(document: Document): string | null {
    return this.paths.get(document) ?? null;
  }

  async store(path: string, content: string): Promise<StoreResult> {
    const doc = parseWellFormed(content);
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
      this.remember(path, doc);
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
    return { path, content: serializeToWellFormedString(entry.doc) };
  }

  async query(query: string, options: QueryOptions): Promise<QueryResult> {
    try {
      return evaluateQuery(
        query,
        { source: this, collection: options.collection, canRead: options.canRead ?? (() => true) },
        { variables: options.variables, maxResults: options.maxResults },
      );
    } catch (error) {
      // With allow_updates the read-only check is skipped, but fontoxpath has no xmldb module and
      // no persistent updates: say that rather than "prefix xmldb could not be resolved".
      const writes = (() => {
        try {
          return findWrites(query);
        } catch {
          return [];
        }
      })();
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
    const ranked = this.index.search(words, (p) => isWithin(p, options.collection)).slice(0, options.limit);
    return {
      results: ranked.map(({ path, score }) => ({
        path,
        score: roundScore(score),
        snippet: makeSnippet(this.docs.get(path)?.text ?? '', words),
      })),
    };
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
        await this.disk.remove(path);
        for (const p of [...this.docs.keys()]) if (isWithin(p, path)) this.forget(p);
        return { path, deleted: 'collection' };
      }
      await this.disk.remove(path);
      this.forget(path);
      return { path, deleted: 'document' };
    });
  }

  async close(): Promise<void> {
    await this.queue;
  }
}
