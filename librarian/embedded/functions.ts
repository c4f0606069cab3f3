/**
 * fn:collection, fn:doc, fn:doc-available and fn:document-uri for fontoxpath, which has none of
 * them (it evaluates over whatever DOM it is given and has no notion of a document store).
 *
 * fontoxpath does not let a custom function be registered in the fn namespace, so they are
 * registered in LIBRARIAN_FN_NS and a `functionNameResolver` sends the unprefixed and `fn:` names
 * there (see `resolveFunctionName`). Queries therefore call them exactly as on eXist:
 * `collection('/db/organism/notes')//note`, `doc('/db/organism/a.xml')`, `document-uri(root($n))`.
 *
 * fontoxpath's function registry is global to the process, so the functions find their store
 * through the evaluation's `currentContext` (a QueryScope), not through a closure: several stores
 * (and the fake eXist in the tests) can evaluate queries in one process.
 */
import fontoxpath from 'fontoxpath';
import type { Document, Node } from 'slimdom';
import { LibrarianError } from '../../src/errors.ts';
import { resolvePath } from '../paths.ts';
import { formatInteger } from './format-integer.ts';
import { formatNumber } from './format-number.ts';
import { registerTextFunctions } from './text-functions.ts';

export const LIBRARIAN_FN_NS = 'urn:x-organism:librarian:fn';
const FN_NS = 'http://www.w3.org/2005/xpath-functions';

/** What collection()/doc() read from during one evaluation. */
export interface DocumentSource {
  /** Documents in `collection` and all its sub-collections, ordered by path; null when it does not exist. */
  collectionDocuments(collection: string): Document[] | null;
  document(path: string): Document | null;
  /** The path a document was loaded from, or null for a constructed one. */
  pathOf(document: Document): string | null;
}

export interface QueryScope {
  source: DocumentSource;
  /** Base for relative paths and the collection of collection() with no argument. */
  collection: string;
  canRead: (path: string) => boolean;
  /**
   * Set when a function refuses with an OrganismError: fontoxpath wraps whatever a custom function
   * throws in a plain Error, so the evaluator rethrows this one instead to keep its code.
   */
  failure?: Error;
}

const OVERRIDDEN: Record<string, number[]> = {
  collection: [0, 1],
  doc: [1],
  'doc-available': [1],
  'document-uri': [0, 1],
  // fontoxpath's own ignores the 'w' and zero-padded pictures (format-integer.ts).
  'format-integer': [2, 3],
  // fontoxpath has no flags argument and no contains-token (regex-flags.ts, text-functions.ts).
  'format-number': [2],
  matches: [3],
  replace: [4],
  tokenize: [3],
  'contains-token': [2],
};

/** The functionNameResolver: fn's collection/doc/document-uri go to ours, everything else as usual. */
export function resolveFunctionName(
  name: { prefix: string; localName: string },
  arity: number,
): { namespaceURI: string; localName: string } {
  const { prefix, localName } = name;
  if ((prefix === '' || prefix === 'fn') && OVERRIDDEN[localName]?.includes(arity)) {
    return { namespaceURI: LIBRARIAN_FN_NS, localName };
  }
  // Returning null lets fontoxpath resolve the prefix itself (declared and built-in prefixes).
  if (prefix === '') return { namespaceURI: FN_NS, localName };
  return null as never;
}

function scopeOf(context: { currentContext: unknown }): QueryScope {
  const scope = context.currentContext as QueryScope | undefined;
  if (!scope?.source) throw new Error('FODC0002: no document store is available to this query');
  return scope;
}

function resolve(scope: QueryScope, path: string): string {
  try {
    return resolvePath(path.replace(/^xmldb:exist:\/\//, ''), scope.collection);
  } catch (error) {
    throw new Error(`FODC0005: ${(error as Error).message}`);
  }
}

function readable(scope: QueryScope, path: string): string {
  const resolved = resolve(scope, path);
  if (!scope.canRead(resolved)) {
    scope.failure = new LibrarianError(
      'librarian.denied',
      `the query may not read ${resolved}: it is outside allowed_collections`,
      {
        path: resolved,
      },
    );
    throw scope.failure;
  }
  return resolved;
}

/** The readable documents in a collection and below; documents the listener may not read are left out. */
function collection(scope: QueryScope, path: string | null): Document[] {
  const resolved = resolve(scope, path ?? scope.collection);
  const docs = scope.source.collectionDocuments(resolved);
  if (docs === null) throw new Error(`FODC0002: collection not found: ${resolved}`);
  return docs.filter((d) => {
    const p = scope.source.pathOf(d);
    return p !== null && scope.canRead(p);
  });
}

function documentUri(scope: QueryScope, node: Node | null): string | null {
  if (node?.nodeType !== 9) return null;
  return scope.source.pathOf(node as Document);
}

let registered = false;

/** Registers the functions once per process (fontoxpath's registry is global). */
export function registerLibrarianFunctions(): void {
  if (registered) return;
  registered = true;
  const fn = (localName: string) => ({ namespaceURI: LIBRARIAN_FN_NS, localName });
  const reg = fontoxpath.registerCustomXPathFunction;
  reg(fn('collection'), [], 'document-node()*', (ctx) => collection(scopeOf(ctx), null));
  reg(fn('collection'), ['xs:string?'], 'document-node()*', (ctx, path: string | null) =>
    collection(scopeOf(ctx), path),
  );
  reg(fn('doc'), ['xs:string?'], 'document-node()?', (ctx, path: string | null) => {
    if (path === null) return null;
    const scope = scopeOf(ctx);
    const resolved = readable(scope, path);
    const doc = scope.source.document(resolved);
    if (!doc) throw new Error(`FODC0002: document not found: ${resolved}`);
    return doc;
  });
  reg(fn('doc-available'), ['xs:string?'], 'xs:boolean', (ctx, path: string | null) => {
    if (path === null) return false;
    const scope = scopeOf(ctx);
    try {
      return scope.source.document(readable(scope, path)) !== null;
    } catch {
      return false;
    }
  });
  // xs:anyURI cannot be returned from a custom function in fontoxpath, so document-uri gives xs:string.
  reg(fn('document-uri'), ['node()?'], 'xs:string?', (ctx, node: Node | null) =>
    documentUri(scopeOf(ctx), node),
  );
  const formatInt = (ctx: { currentContext: unknown }, value: number | null, picture: string): string => {
    const out = formatInteger(value, picture);
    if (out !== null) return out;
    const scope = scopeOf(ctx);
    scope.failure = new LibrarianError(
      'librarian.unsupported',
      `unsupported: format-integer picture ${JSON.stringify(picture)} (the embedded librarian does decimal digits with grouping, w, W, Ww, i, I, a and A; the exist and basex backends do all)`,
      { feature: 'format-integer picture' },
    );
    throw scope.failure;
  };
  reg(fn('format-integer'), ['xs:integer?', 'xs:string'], 'xs:string', formatInt);
  reg(fn('format-integer'), ['xs:integer?', 'xs:string', 'xs:string?'], 'xs:string', (ctx, value, picture) =>
    formatInt(ctx, value as number | null, picture as string),
  );
  reg(fn('format-number'), ['xs:numeric?', 'xs:string'], 'xs:string', (ctx, value, picture) => {
    const out = formatNumber(value as number | null, picture as string);
    if (out !== null) return out;
    const scope = scopeOf(ctx);
    scope.failure = new LibrarianError(
      'librarian.unsupported',
      `unsupported: format-number picture ${JSON.stringify(picture)} for this value (the embedded librarian does digits 0 and #, grouping, '.', %, ‰, a negative sub-picture and passive text, rounding half to even where the value's decimal and binary forms agree; the exist and basex backends do all)`,
      { feature: 'format-number picture' },
    );
    throw scope.failure;
  });
  registerTextFunctions(reg, fn, (ctx, error) => {
    scopeOf(ctx).failure = error;
    return error;
  });
  reg(fn('document-uri'), [], 'xs:string?', () => {
    throw new Error('XPDY0002: document-uri() needs a node argument here, e.g. document-uri(root($node))');
  });
}
