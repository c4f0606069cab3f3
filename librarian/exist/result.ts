/**
 * Reading what eXist's REST API answers:
 * - a query result: `<exist:result exist:hits exist:start exist:count>` around the items, with
 *   typed="yes" wrapping atomic values (`exist:value exist:type`), attributes (`exist:attribute`),
 *   text nodes (`exist:text`) and documents (`exist:document`); elements come bare;
 * - a collection listing: `<exist:result><exist:collection name=...>` with `exist:collection` and
 *   `exist:resource` children (names URI-encoded);
 * - an error: `<exception><path/><message/></exception>`.
 */
import { type Element, type Node, parseXmlDocument, serializeToWellFormedString } from 'slimdom';
import { LibrarianError } from '../../src/errors.ts';
import type { ListResult } from '../backend.ts';
import { joinPath } from '../paths.ts';
import { EXIST_NS } from './query-body.ts';

export interface ExistResult {
  hits: number;
  start: number;
  count: number;
  items: string[];
}

function parse(xml: string, what: string) {
  try {
    return parseXmlDocument(xml);
  } catch (error) {
    throw new LibrarianError(
      'librarian.backend',
      `eXist-db sent ${what} that is not XML: ${(error as Error).message.split('\n')[0]}`,
    );
  }
}

function existAttr(el: Element, name: string): string | null {
  return el.getAttributeNS(EXIST_NS, name) ?? el.getAttribute(name);
}

function innerXml(el: Element): string {
  return el.childNodes.map((n: Node) => serializeToWellFormedString(n)).join('');
}

/** One item of a typed result as a string (XML for elements and documents, text otherwise). */
function item(node: Node): string | null {
  if (node.nodeType === 3 || node.nodeType === 4) {
    // Bare text only appears untyped; whitespace between items is not an item.
    const data = (node as unknown as { data: string }).data;
    return data.trim() === '' ? null : data;
  }
  if (node.nodeType !== 1) return serializeToWellFormedString(node);
  const el = node as Element;
  if (el.namespaceURI === EXIST_NS) {
    switch (el.localName) {
      case 'value':
      case 'attribute':
      case 'text':
        return el.textContent ?? '';
      case 'document':
        return innerXml(el);
    }
  }
  return serializeToWellFormedString(el);
}

export function parseExistResult(xml: string): ExistResult {
  const doc = parse(xml, 'a query result');
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== EXIST_NS || root.localName !== 'result') {
    throw new LibrarianError(
      'librarian.backend',
      `eXist-db answered the query without an exist:result wrapper (root <${root?.nodeName}>)`,
    );
  }
  const items: string[] = [];
  for (const child of root.childNodes) {
    const value = item(child);
    if (value !== null) items.push(value);
  }
  const number = (name: string, fallback: number) => {
    const raw = existAttr(root, name);
    const n = raw === null ? Number.NaN : Number(raw);
    return Number.isFinite(n) ? n : fallback;
  };
  return {
    hits: number('hits', items.length),
    start: number('start', 1),
    count: number('count', items.length),
    items,
  };
}

/** The listing of a collection, or null when the XML is not one (GET on a document returns the document). */
export function parseCollectionListing(xml: string, path: string): ListResult | null {
  const doc = parse(xml, 'a collection listing');
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== EXIST_NS || root.localName !== 'result') return null;
  const collection = root.children.find((c) => c.namespaceURI === EXIST_NS && c.localName === 'collection');
  if (!collection) return null;
  const entries = (localName: string) =>
    collection.children
      .filter((c) => c.namespaceURI === EXIST_NS && c.localName === localName)
      .map((c) => decodeURIComponent(c.getAttribute('name') ?? ''))
      .filter((name) => name !== '')
      .sort()
      .map((name) => ({ name, path: joinPath(path, name) }));
  return { collection: path, collections: entries('collection'), documents: entries('resource') };
}

/** The `<message>` of eXist's `<exception>` body, or null when the body is not one. */
export function parseException(xml: string): string | null {
  if (!xml.includes('<exception')) return null;
  try {
    const root = parseXmlDocument(xml).documentElement;
    if (root?.localName !== 'exception') return null;
    const message = root.children.find((c) => c.localName === 'message');
    return message?.textContent?.trim() ?? null;
  } catch {
    return null;
  }
}
