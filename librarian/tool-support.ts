/**
 * What the six librarian tools share: their tool_config schema and common definition fields, how
 * a path or collection argument is resolved (relative to the default collection) and checked
 * against allowed_collections, and the backend. Lives outside librarian/tools/ because every file there is loaded as a tool.
 */
import type { ToolDefinition, ToolRunContext, ToolServices } from '../src/tools/types.ts';
import type { JsonSchema } from '../src/xml/json-schema.ts';
import { type AccessPolicy, accessPolicy } from './access.ts';
import type { LibrarianBackend } from './backend.ts';
import { checkDocumentName, joinPath, resolvePath } from './paths.ts';
import { librarianBackend, librarianOptions, librarianUnavailableReason } from './service.ts';

/** The tool_config keys every librarian tool understands. */
export const LIBRARIAN_TOOL_CONFIG: JsonSchema = {
  type: 'object',
  properties: {
    allowed_collections: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description:
        'Globs of database paths this listener may use, e.g. ["/db/organism/notes", "/db/organism/notes/**"]; default: the default collection and everything below it.',
    },
    allow_updates: {
      type: 'boolean',
      default: false,
      description:
        'librarian_query only: let queries write (xmldb:store/remove, update expressions, file/http/process modules). Off: such queries are refused before they run.',
    },
  },
};

export const COLLECTION_ARG: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 1024,
  description:
    'Collection path, absolute (/db/organism/notes) or relative to the default collection (notes). Default: the default collection.',
};

export const PATH_ARG: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 1024,
  description:
    'Document path, absolute (/db/organism/notes/a.xml) or relative to the default collection (notes/a.xml).',
};

export interface LibrarianCall {
  backend: LibrarianBackend;
  policy: AccessPolicy;
  defaultCollection: string;
  allowUpdates: boolean;
  /** A collection argument resolved and checked (the default collection when absent). */
  collection(arg: string | undefined): string;
  /** A document path argument resolved and checked. */
  document(arg: string): string;
  /** A document path built from a collection argument and a document name, checked. */
  documentIn(collection: string | undefined, name: string): string;
}

export async function librarianCall(ctx: ToolRunContext): Promise<LibrarianCall> {
  const { defaultCollection } = librarianOptions(ctx.services, ctx.dataDir);
  const policy = accessPolicy(ctx.config.allowed_collections, defaultCollection);
  const backend = await librarianBackend(ctx);
  const collection = (arg: string | undefined) => {
    const path = arg === undefined ? defaultCollection : resolvePath(arg, defaultCollection, 'collection');
    policy.checkCollection(path);
    return path;
  };
  return {
    backend,
    policy,
    defaultCollection,
    allowUpdates: ctx.config.allow_updates === true,
    collection,
    document(arg) {
      const path = resolvePath(arg, defaultCollection, 'path');
      policy.checkDocument(path);
      return path;
    },
    documentIn(collectionArg, name) {
      const base =
        collectionArg === undefined
          ? defaultCollection
          : resolvePath(collectionArg, defaultCollection, 'collection');
      const path = joinPath(base, checkDocumentName(name));
      policy.checkDocument(path);
      return path;
    },
  };
}

export function unavailable(services: ToolServices): string | null {
  return librarianUnavailableReason(services);
}

/**
 * The definition fields of the four librarian tools that only read (get, list, query, search),
 * spread into each so their capability, config schema and availability cannot drift apart.
 */
export const LIBRARIAN_READ_TOOL = {
  readOnly: true,
  capability: 'db_read',
  source: 'native',
  config: LIBRARIAN_TOOL_CONFIG,
  unavailable,
} as const satisfies Partial<ToolDefinition>;

/** The same for the two that change documents (store, delete): they act once per call id. */
export const LIBRARIAN_WRITE_TOOL = {
  readOnly: false,
  capability: 'db_write',
  source: 'native',
  sideEffect: true,
  config: LIBRARIAN_TOOL_CONFIG,
  unavailable,
} as const satisfies Partial<ToolDefinition>;
