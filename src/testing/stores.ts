/**
 * The stores a tested listener's tools use, for the test to fill before a send and read after: the
 * very instances the tools reach through the test's resource cache (the key/value store and the
 * embedded librarian, both in the test's temp folder unless organism.yaml points elsewhere).
 */
import type { LibrarianBackend, ListResult } from '../../librarian/backend.ts';
import { resolveLibrarianOptions } from '../../librarian/config.ts';
import { resolvePath } from '../../librarian/paths.ts';
import { sharedKvStore } from '../kv/index.ts';
import type { ToolServices } from '../tools/types.ts';

/** The key/value store of key_value_get/set/delete. Keys are in the listener's own namespace unless one is given. */
export interface TestKv {
  /** The stored value, or undefined when the key is absent (or its ttl ran out). */
  get(key: string, namespace?: string): Promise<unknown>;
  set(key: string, value: unknown, namespace?: string): Promise<void>;
  /** True when a key was removed. */
  delete(key: string, namespace?: string): Promise<boolean>;
}

/** The librarian of librarian_*. Paths are absolute (/db/...) or relative to the default collection. */
export interface TestLibrarian {
  /** The default collection (organism.yaml librarian.default_collection, /db/organism by default). */
  readonly collection: string;
  /** Stores (or replaces) a document; resolves with its absolute path. */
  store(path: string, xml: string): Promise<string>;
  /** The document as XML text, or undefined when there is none at that path. */
  get(path: string): Promise<string | undefined>;
  /** A collection's documents and sub-collections (default: the default collection). */
  list(collection?: string): Promise<ListResult>;
  /** The backend itself, for queries and searches. */
  backend(): Promise<LibrarianBackend>;
}

export function testKv(services: ToolServices, own: string): TestKv {
  const store = () => sharedKvStore(services);
  return {
    get: async (key, namespace = own) => (await store()).get(namespace, key),
    set: async (key, value, namespace = own) => (await store()).set(namespace, key, value),
    delete: async (key, namespace = own) => (await store()).delete(namespace, key),
  };
}

export function testLibrarian(services: ToolServices): TestLibrarian {
  const { defaultCollection } = resolveLibrarianOptions(
    services.config.librarian,
    services.config.organism.data_dir,
  );
  const where = (path: string, what = 'path') => resolvePath(path, defaultCollection, what);
  // Loaded with the first use: most tests have no librarian, and it brings an XQuery engine.
  const backend = async () => (await import('../../librarian/service.ts')).sharedLibrarian(services);
  return {
    collection: defaultCollection,
    store: async (path, xml) => (await (await backend()).store(where(path), xml)).path,
    async get(path) {
      const at = where(path);
      try {
        return (await (await backend()).get(at)).content;
      } catch (error) {
        if ((error as { code?: unknown }).code === 'librarian.not_found') return undefined;
        throw error;
      }
    },
    list: async (name) =>
      (await backend()).list(name === undefined ? defaultCollection : where(name, 'collection')),
    backend,
  };
}
