/**
 * One item of a BaseX result as the librarian returns it (the same shape as the other backends):
 * elements, documents, comments and processing instructions as serialized XML; attributes, text
 * nodes and atomic values as their string value. BaseX serializes nodes with the XML output method,
 * so an attribute's or a text node's value arrives escaped and is unescaped here; an atomic value
 * arrives as it is (unescaping it turned the string "a &lt; b" into "a < b").
 */
import { LibrarianError } from '../../src/errors.ts';
import { type BasexItem, ITEM_TYPES } from './client.ts';

const ENTITY = /&(?:#x([0-9A-Fa-f]+)|#(\d+)|(lt|gt|amp|quot|apos));/g;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function unescapeXml(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY, (_, hex: string, dec: string, name: string) =>
    name ? NAMED[name]! : String.fromCodePoint(hex ? Number.parseInt(hex, 16) : Number(dec)),
  );
}

export function basexItem(item: BasexItem, index: number): string {
  switch (item.type) {
    case ITEM_TYPES.element:
    case ITEM_TYPES.document:
    case ITEM_TYPES.comment:
    case ITEM_TYPES.processingInstruction:
      return item.value;
    case ITEM_TYPES.attribute: {
      // name="value": the value between the first =" and the closing quote.
      const start = item.value.indexOf('="');
      return unescapeXml(item.value.slice(start + 2, -1));
    }
    case ITEM_TYPES.function:
      throw new LibrarianError(
        'librarian.query',
        `result item ${index + 1} is a function, which has no serialization; return nodes or atomic values`,
      );
    case ITEM_TYPES.text:
      return unescapeXml(item.value);
    default:
      return item.value;
  }
}
