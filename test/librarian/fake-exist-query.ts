/**
 * The XQuery side of the fake eXist: evaluates a REST query POST with fontoxpath over the fake's
 * stored documents, with the functions eXist provides that the librarian's queries (and an
 * injected one) would call: xmldb:collection-available / create-collection / reindex / store /
 * remove (real, so an injection that got through would really delete), ft:query / ft:score (BM25
 * over the documents an installed collection.xconf covers; without one ft:query finds nothing,
 * as on eXist), and kwic:summarize. Results are written in eXist's typed wire format.
 */
import fontoxpath from 'fontoxpath';
import { Document, type Element, type Node, parseXmlDocument, serializeToWellFormedString } from 'slimdom';
import {
  type QueryScope,
  registerLibrarianFunctions,
  resolveFunctionName,
} from '../../librarian/embedded/functions.ts';
import { documentText } from '../../librarian/text/extract.ts';
import { InvertedIndex } from '../../librarian/text/index.ts';
import { snippetParts } from '../../librarian/text/snippet.ts';
import { queryTerms } from '../../librarian/text/tokenize.ts';

export const EXIST_NS = 'http://exist.sourceforge.net/NS/exist';
const SX_NS = 'http://exist-db.org/xquery/types/serialized';
const LUCENE_NS = 'http://exist-db.org/xquery/lucene';
const FAKE_XMLDB = 'urn:fake-exist:xmldb';
const FAKE_KWIC = 'urn:fake-exist:kwic';

/** What the fake's query functions need from its store. */
export interface FakeStore {
  docs: Map<string, Document>;
  collections: Set<string>;
  pathOf(doc: Document): string | null;
  storeXml(path: string, xml: string): void;
  remove(path: string): boolean;
  createCollection(path: string): void;
  /** True when a collection.xconf with a Lucene <text> covers the collection (nearest one up the tree). */
  luceneIndexed(collection: string): boolean;
}

interface FakeScope extends QueryScope {
  store: FakeStore;
  scores: Map<Node, number>;
  terms: string[];
  index?: InvertedIndex;
}

export class QueryFailure extends Error {}

function scope(ctx: { currentContext: unknown }): FakeScope {
  return ctx.currentContext as FakeScope;
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/')) || '/';
}

function luceneIndex(s: FakeScope): InvertedIndex {
  if (!s.index) {
    s.index = new InvertedIndex();
    for (const [path, doc] of s.store.docs)
      if (s.store.luceneIndexed(parentOf(path))) s.index.set(path, documentText(doc));
  }
  return s.index;
}

let registered = false;

function register(): void {
  if (registered) return;
  registered = true;
  registerLibrarianFunctions();
  const reg = fontoxpath.registerCustomXPathFunction;
  const x = (localName: string) => ({ namespaceURI: FAKE_XMLDB, localName });
  reg(x('collection-available'), ['xs:string'], 'xs:boolean', (ctx, p: string) =>
    scope(ctx).store.collections.has(p),
  );
  reg(
    x('create-collection'),
    ['xs:string', 'xs:string'],
    'xs:string',
    (ctx, parent: string, name: string) => {
      const path = `${parent}/${name}`;
      scope(ctx).store.createCollection(path);
      return path;
    },
  );
  reg(x('reindex'), ['xs:string'], 'xs:boolean', (ctx, p: string) => scope(ctx).store.collections.has(p));
  reg(x('remove'), ['xs:string'], 'item()*', (ctx, p: string) => {
    scope(ctx).store.remove(p);
    return [];
  });
  reg(x('remove'), ['xs:string', 'xs:string'], 'item()*', (ctx, c: string, d: string) => {
    scope(ctx).store.remove(`${c}/${d}`);
    return [];
  });
  reg(
    x('store'),
    ['xs:string', 'xs:string', 'item()'],
    'xs:string',
    (ctx, c: string, d: string, content: unknown) => {
      const xml = typeof content === 'string' ? content : serializeToWellFormedString(content as Node);
      scope(ctx).store.storeXml(`${c}/${d}`, xml);
      return `${c}/${d}`;
    },
  );
  reg(
    { namespaceURI: LUCENE_NS, localName: 'query' },
    ['node()*', 'item()'],
    'node()*',
    (ctx, nodes: Node[], query: unknown) => {
      const s = scope(ctx);
      const terms =
        typeof query === 'string'
          ? queryTerms(query)
          : [...(query as Element).getElementsByTagName('term')].map((t) =>
              (t.textContent ?? '').toLowerCase(),
            );
      s.terms = terms;
      const index = luceneIndex(s);
      return nodes.filter((n) => {
        const path = s.store.pathOf(n.ownerDocument as Document);
        if (!path || !s.store.luceneIndexed(parentOf(path))) return false;
        const score = index.score(path, terms);
        if (score > 0) s.scores.set(n, score);
        return score > 0;
      });
    },
  );
  reg(
    { namespaceURI: LUCENE_NS, localName: 'score' },
    ['node()'],
    'xs:double',
    (ctx, n: Node) => scope(ctx).scores.get(n) ?? 0,
  );
  reg(
    { namespaceURI: FAKE_KWIC, localName: 'summarize' },
    ['node()', 'element()'],
    'element()*',
    (ctx, n: Node, config: Element) => {
      const parts = snippetParts(
        documentText(n),
        scope(ctx).terms,
        Number(config.getAttribute('width') ?? 40),
      );
      if (!parts) return [];
      const d = new Document();
      const p = d.createElement('p');
      for (const [cls, text] of [
        ['previous', parts.before],
        ['hi', parts.hit],
        ['following', parts.after],
      ] as const) {
        const span = d.createElement('span');
        span.setAttribute('class', cls);
        span.appendChild(d.createTextNode(text));
        p.appendChild(span);
      }
      return [p];
    },
  );
  fontoxpath.registerXQueryModule(`module namespace kwic = "http://exist-db.org/xquery/kwic";
declare namespace fk = "${FAKE_KWIC}";
declare %public function kwic:summarize($hit as node(), $config as element()) as element()* { fk:summarize($hit, $config) };`);
}

/** eXist's demarshalling of <sx:sequence>: typed values; a sequence outside the sx namespace binds nothing. */
function bindVariables(variables: Element | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of variables?.children.filter(
    (c) => c.localName === 'variable' && c.namespaceURI === EXIST_NS,
  ) ?? []) {
    const name = v.getElementsByTagNameNS(EXIST_NS, 'localname')[0]?.textContent ?? '';
    const sequence = v.children.find((c) => c.localName === 'sequence' && c.namespaceURI === SX_NS);
    const values =
      sequence?.children.filter((c) => c.localName === 'value' && c.namespaceURI === SX_NS) ?? [];
    const type = values[0]?.getAttribute('type') ?? 'xs:string';
    const raw = values.map((c) => c.textContent ?? '');
    const typed = raw.map((t) =>
      type === 'xs:integer' || type === 'xs:double' ? Number(t) : type === 'xs:boolean' ? t === 'true' : t,
    );
    const known = ['xs:string', 'xs:integer', 'xs:double', 'xs:boolean'].includes(type) ? type : 'xs:string';
    out[name] = fontoxpath.createTypedValueFactory(`${known}*`)(typed as never, fontoxpath.domFacade);
  }
  return out;
}

function resolver(name: { prefix: string; localName: string }, arity: number) {
  if (name.prefix === 'xmldb') return { namespaceURI: FAKE_XMLDB, localName: name.localName };
  return resolveFunctionName(name, arity);
}

/** eXist's serializer writes a carriage return as a character reference, so it survives parsing. */
function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;');
}

/** eXist's message for a failed query: code, reason, "[at line L, column C]" when known. */
function existMessage(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  const lines = raw.split('\n');
  const reason = (lines.find((l) => l.startsWith('Error: '))?.slice(7) ?? lines[0] ?? raw).split(
    '. Expected',
  )[0];
  const at = /at <>:(\d+):(\d+)/.exec(raw);
  const code = /^[A-Z]{4}\d{4}/.exec(reason ?? '')?.[0];
  return `${code ? `err:${code} ` : ''}${reason}${at ? ` [at line ${at[1]}, column ${at[2]}]` : ''}`;
}

function typedItem(item: unknown, string: string | undefined, store: FakeStore): string {
  if (typeof item === 'object' && item !== null && 'nodeType' in item) {
    const node = item as Node;
    if (node.nodeType === 2) {
      const a = node as unknown as { localName: string; value: string };
      return `<exist:attribute exist:local="${a.localName}">${xmlEscape(a.value)}</exist:attribute>`;
    }
    if (node.nodeType === 3 || node.nodeType === 4)
      return `<exist:text>${xmlEscape((node as unknown as { data: string }).data)}</exist:text>`;
    if (node.nodeType === 9) {
      const uri = store.pathOf(node as Document) ?? '';
      return `<exist:document exist:uri="${uri}">${serializeToWellFormedString(node)}</exist:document>`;
    }
    return serializeToWellFormedString(node);
  }
  const type =
    typeof item === 'boolean'
      ? 'xs:boolean'
      : typeof item === 'number'
        ? Number.isInteger(item)
          ? 'xs:integer'
          : 'xs:double'
        : 'xs:string';
  return `<exist:value exist:type="${type}">${xmlEscape(string ?? String(item))}</exist:value>`;
}

/** Runs the POSTed <query> body; returns eXist's XML answer or throws QueryFailure with eXist's message. */
export function runQueryBody(body: string, contextPath: string, store: FakeStore): string {
  register();
  const root = parseXmlDocument(body).documentElement;
  if (!root || root.namespaceURI !== EXIST_NS || root.localName !== 'query')
    throw new QueryFailure('No query specified');
  const text =
    root.children.find((c) => c.localName === 'text' && c.namespaceURI === EXIST_NS)?.textContent ?? '';
  const variables = bindVariables(root.children.find((c) => c.localName === 'variables'));
  const start = Number(root.getAttribute('start') ?? 1);
  const max = Number(root.getAttribute('max') ?? 10);
  const s: FakeScope = {
    source: {
      collectionDocuments: (c) => docsUnder(store, c),
      document: (p) => store.docs.get(p) ?? null,
      pathOf: (d) => store.pathOf(d),
    },
    collection: contextPath,
    canRead: () => true,
    store,
    scores: new Map(),
    terms: [],
  };
  const options = {
    language: fontoxpath.evaluateXPath.XQUERY_3_1_LANGUAGE,
    currentContext: s,
    functionNameResolver: resolver,
    nodesFactory: new Document(),
  };
  let items: unknown[];
  let strings: string[] | undefined;
  try {
    items = fontoxpath.evaluateXPath(
      text,
      null,
      null,
      variables,
      fontoxpath.evaluateXPath.ALL_RESULTS_TYPE,
      options as never,
    ) as unknown[];
    if (items.some((i) => typeof i !== 'object' || i === null || !('nodeType' in (i as object)))) {
      strings = fontoxpath.evaluateXPath(
        text,
        null,
        null,
        variables,
        fontoxpath.evaluateXPath.STRINGS_TYPE,
        options as never,
      ) as string[];
    }
  } catch (error) {
    throw new QueryFailure(existMessage(error));
  }
  if (items.length > 0 && (start < 1 || start > items.length))
    throw new QueryFailure('Start parameter out of range');
  const count = max <= 0 || start - 1 + max > items.length ? Math.max(0, items.length - start + 1) : max;
  const shown = items
    .slice(start - 1, start - 1 + count)
    .map((item, i) => typedItem(item, strings?.[start - 1 + i], store).replace(/\r/g, '&#13;'));
  return (
    `<exist:result xmlns:exist="${EXIST_NS}" exist:hits="${items.length}" exist:start="${start}" exist:count="${shown.length}">` +
    `${shown.join('')}</exist:result>`
  );
}

function docsUnder(store: FakeStore, collection: string): Document[] {
  return [...store.docs.entries()]
    .filter(([p]) => p.startsWith(`${collection}/`))
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([, d]) => d);
}
