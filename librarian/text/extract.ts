/**
 * The searchable text of a document: its text and CDATA content, with a space at every element
 * boundary (so `<a>red</a><b>wine</b>` reads "red wine", as eXist's Lucene indexer treats elements
 * as blocks), whitespace collapsed. Attribute values are not text, as in eXist's default index.
 */
import type { Node } from 'slimdom';

const TEXT_NODE = 3;
const CDATA_NODE = 4;
const ELEMENT_NODE = 1;

export function documentText(node: Node): string {
  const parts: string[] = [];
  const walk = (n: Node): void => {
    if (n.nodeType === TEXT_NODE || n.nodeType === CDATA_NODE) {
      parts.push((n as unknown as { data: string }).data);
      return;
    }
    if (n.nodeType === ELEMENT_NODE) parts.push(' ');
    for (let c = n.firstChild; c; c = c.nextSibling) walk(c);
    if (n.nodeType === ELEMENT_NODE) parts.push(' ');
  };
  walk(node);
  return parts.join('').replace(/\s+/g, ' ').trim();
}
