/**
 * The read-only check for librarian_query when tool_config does not set `allow_updates`. The query
 * is parsed (fontoxpath's XQuery parser, XQueryX out) rather than scanned as text, so a quote in
 * element content or a comment cannot hide a call. Calls are checked against an allow list of
 * modules: a read-only query may call the standard functions and the read side of eXist's modules;
 * xmldb:store/remove and every other write, eXist's `update` expressions, XQuery Update outside
 * copy/modify, util:eval and other ways to call code by name, and the file, http, process, system
 * and security modules are refused. An unknown module is refused too: it might write.
 */
import { Document, type Element } from 'slimdom';
import { LibrarianError } from '../src/errors.ts';
import { lazyRequire } from '../src/lazy-require.ts';
import { substituteCountClauses } from './embedded/count.ts';
import { scanStringConstructors } from './embedded/string-constructor.ts';
import { codeOnly, unsupportedSyntax } from './embedded/unsupported.ts';
import { syntaxError } from './xquery-errors.ts';

// fontoxpath, a large XQuery engine, on the first query checked: not in a daemon that never queries.
const fontoxpath = lazyRequire<typeof import('fontoxpath')>('fontoxpath');

const FN = 'http://www.w3.org/2005/xpath-functions';
const XMLDB = 'http://exist-db.org/xquery/xmldb';
const UTIL = 'http://exist-db.org/xquery/util';
const XQUF = 'http://www.w3.org/2007/xquery-update-10';

/** Prefixes eXist binds without a declaration. */
const PREDECLARED: Record<string, string> = {
  fn: FN,
  xs: 'http://www.w3.org/2001/XMLSchema',
  math: 'http://www.w3.org/2005/xpath-functions/math',
  map: 'http://www.w3.org/2005/xpath-functions/map',
  array: 'http://www.w3.org/2005/xpath-functions/array',
  local: 'http://www.w3.org/2005/xquery-local-functions',
  xmldb: XMLDB,
  util: UTIL,
  ft: 'http://exist-db.org/xquery/lucene',
  file: 'http://exist-db.org/xquery/file',
  sm: 'http://exist-db.org/xquery/securitymanager',
  system: 'http://exist-db.org/xquery/system',
  repo: 'http://exist-db.org/xquery/repo',
  request: 'http://exist-db.org/xquery/request',
  response: 'http://exist-db.org/xquery/response',
  session: 'http://exist-db.org/xquery/session',
  transform: 'http://exist-db.org/xquery/transform',
  inspect: 'http://exist-db.org/xquery/inspection',
};

/** Modules a read-only query may call (and import), with the functions of each it may not call. */
const ALLOWED: Record<string, ReadonlySet<string> | 'only-read'> = {
  [FN]: new Set([
    'function-lookup',
    'load-xquery-module',
    'transform',
    'unparsed-text',
    'unparsed-text-lines',
    'json-doc',
  ]),
  'http://www.w3.org/2001/XMLSchema': new Set(),
  'http://www.w3.org/2005/xpath-functions/math': new Set(),
  'http://www.w3.org/2005/xpath-functions/map': new Set(),
  'http://www.w3.org/2005/xpath-functions/array': new Set(),
  'http://www.w3.org/2005/xquery-local-functions': new Set(),
  'http://exist-db.org/xquery/lucene': new Set(),
  'http://exist-db.org/xquery/kwic': new Set(),
  'http://exist-db.org/xquery/ngram': new Set(),
  'http://exist-db.org/xquery/range': new Set(),
  'http://www.functx.com': new Set(),
  // util:eval and friends run a string as code, which no check of this text could see into.
  [UTIL]: new Set([
    'eval',
    'eval-inline',
    'eval-with-context',
    'eval-and-serialize',
    'eval-async',
    'compile',
    'compile-query',
    'function',
    'call',
    'import-module',
  ]),
  [XMLDB]: 'only-read',
};

/** xmldb functions that only read. Everything else in xmldb writes, moves, logs in or reindexes. */
const XMLDB_READ = new Set([
  'collection-available',
  'get-child-collections',
  'get-child-resources',
  'get-mime-type',
  'last-modified',
  'created',
  'size',
  'document-has-lock',
  'encode',
  'decode',
  'encode-uri',
  'decode-uri',
  'match-collection',
  'find-last-modified-since',
  'find-last-modified-until',
  'get-current-user',
  'is-authenticated',
  'is-admin-user',
]);

const UPDATE_SYNTAX = /\bupdate\s+(insert|replace|value|delete|rename)\b/;

// The update-syntax scan reads codeOnly(query): comments and strings blanked. Safety does not rest
// on it: fontoxpath cannot parse eXist's update syntax, so a query the scan misreads is refused by
// the parser anyway; the scan only makes the message clearer.

function children(el: Element, name: string): Element[] {
  return el.children.filter((c) => c.localName === name);
}

function text(el: Element | undefined): string {
  return el?.textContent ?? '';
}

function* descendants(el: Element): Generator<Element> {
  for (const c of el.children) {
    yield c;
    yield* descendants(c);
  }
}

function hasAncestor(el: Element, localName: string, ns: string): boolean {
  for (let p = el.parentElement; p; p = p.parentElement)
    if (p.localName === localName && p.namespaceURI === ns) return true;
  return false;
}

/** Parses the query to XQueryX, or throws the syntax error with its line and column. */
function parse(query: string): Element {
  // fontoxpath cannot parse a count clause (a let clause of the same variable reads the same for
  // this check) or a string constructor with space around an interpolation's expression.
  const counted = substituteCountClauses(query, (name) => `let ${name} := ()`).text;
  const source = scanStringConstructors(counted)?.normalized ?? counted;
  try {
    const { parseScript, evaluateXPath } = fontoxpath();
    return parseScript(
      source,
      { language: evaluateXPath.XQUERY_UPDATE_3_1_LANGUAGE },
      new Document() as never,
    ) as unknown as Element;
  } catch (error) {
    // A valid query in syntax fontoxpath has no parser for is named as such; anything else is a
    // syntax error with where it is and what is there, never a read-only refusal.
    throw unsupportedSyntax(query) ?? syntaxError(error, source);
  }
}

/** What in `query` would write or escape the database, one line each; empty when it only reads. */
export function findWrites(query: string): string[] {
  const found: string[] = [];
  const update = UPDATE_SYNTAX.exec(codeOnly(query));
  if (update) {
    found.push(`eXist update expression "update ${update[1]}"`);
    return found;
  }
  const ast = parse(query);
  const prefixes = new Map<string, Set<string>>();
  const bind = (prefix: string, uri: string): void => {
    const set = prefixes.get(prefix) ?? new Set();
    set.add(uri);
    prefixes.set(prefix, set);
  };
  for (const [prefix, uri] of Object.entries(PREDECLARED)) bind(prefix, uri);
  const declaredFunctionNs = new Set<string>();
  let defaultFunctionNs = FN;
  const all = [...descendants(ast)];
  for (const el of all) {
    if (el.localName === 'namespaceDecl' || el.localName === 'namespaceDeclaration') {
      bind(text(children(el, 'prefix')[0]), text(children(el, 'uri')[0]));
    } else if (el.localName === 'moduleImport') {
      const uri = text(children(el, 'targetNamespace')[0]);
      const prefix = text(children(el, 'namespacePrefix')[0]);
      if (prefix) bind(prefix, uri);
      if (!(uri in ALLOWED)) found.push(`import of module ${uri}`);
    } else if (
      el.localName === 'defaultNamespaceDecl' &&
      text(children(el, 'defaultNamespaceCategory')[0]) === 'function'
    ) {
      defaultFunctionNs = text(children(el, 'uri')[0]);
    }
  }
  for (const el of all) {
    if (el.localName === 'functionDecl') {
      const name = children(el, 'functionName')[0];
      const prefix = name?.getAttributeNS(name.namespaceURI, 'prefix') ?? '';
      for (const uri of prefixes.get(prefix) ?? []) declaredFunctionNs.add(uri);
    }
  }
  for (const el of all) {
    if (
      el.namespaceURI === XQUF &&
      ['insertExpr', 'deleteExpr', 'replaceExpr', 'renameExpr'].includes(el.localName)
    ) {
      if (!hasAncestor(el, 'modifyExpr', XQUF))
        found.push(`XQuery Update ${el.localName.replace('Expr', '')} expression`);
      continue;
    }
    if (el.localName !== 'functionName' || el.parentElement?.localName === 'functionDecl') continue;
    const local = text(el);
    const uriAttr = el.getAttributeNS(el.namespaceURI, 'URI');
    const prefix = el.getAttributeNS(el.namespaceURI, 'prefix');
    const label = uriAttr ? `Q{${uriAttr}}${local}` : prefix ? `${prefix}:${local}` : local;
    const uris = uriAttr ? [uriAttr] : prefix ? [...(prefixes.get(prefix) ?? [])] : [defaultFunctionNs];
    if (uris.length === 0) found.push(`${label} (undeclared prefix ${prefix})`);
    for (const uri of uris) {
      const rule = ALLOWED[uri];
      if (rule === 'only-read') {
        if (!XMLDB_READ.has(local)) found.push(label);
      } else if (rule) {
        if (rule.has(local)) found.push(label);
      } else if (!declaredFunctionNs.has(uri)) {
        found.push(`${label} (module ${uri})`);
      }
    }
  }
  return [...new Set(found)];
}

/** Throws librarian.read_only naming what was found when `query` is not read-only. */
export function assertReadOnly(query: string): void {
  const found = findWrites(query);
  if (found.length === 0) return;
  throw new LibrarianError(
    'librarian.read_only',
    `the query is not read-only: it uses ${found.slice(0, 5).join(', ')}${found.length > 5 ? ', ...' : ''}. ` +
      "Queries may only read unless this listener's tool_config sets allow_updates: true; " +
      'use librarian_store and librarian_delete to change documents.',
    { found },
  );
}
