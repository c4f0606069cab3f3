/**
 * What the typed-variable rewrites share (typed-binding.ts, typed-external.ts): which declared
 * types fontoxpath's `instance of` decides right, the check written around a value, and the
 * proof's first and last steps (where fontoxpath says an expression is, and whether the rewritten
 * text parses to the tree expected).
 */
import type { Element } from 'slimdom';
import type { LibrarianError } from '../../src/errors.ts';
import { canonical } from './order-by.ts';

export const FONTO = 'http://fontoxml.com/fontoxpath';
export const ERR = 'http://www.w3.org/2005/xqt-errors';

export type Parse = (query: string) => Element;

/** Item types whose `instance of` fontoxpath was measured to answer right. */
export function checkable(type: Element): boolean {
  const item = itemType(type);
  if (!item) return false;
  switch (item.localName) {
    case 'atomicType':
      return atomicPrefix(item) === 'xs';
    case 'anyItemType':
    case 'anyKindTest':
    case 'textTest':
    case 'commentTest':
    case 'piTest':
    case 'anyMapTest':
    case 'anyArrayTest':
      return true;
    case 'elementTest':
    case 'attributeTest':
      return !item.children.some((c) => c.localName === 'typeName');
    default:
      return false;
  }
}

/** A type declaration's one item type (its occurrence indicator aside); undefined when it has more. */
export function itemType(type: Element): Element | undefined {
  const parts = [...type.children];
  if (parts[parts.length - 1]?.localName === 'occurrenceIndicator') parts.pop();
  return parts.length === 1 ? parts[0] : undefined;
}

/** A type declaration's occurrence indicator: '', '?', '*' or '+'. */
export function occurrence(type: Element): string {
  const last = type.children[type.children.length - 1];
  return last?.localName === 'occurrenceIndicator' ? (last.textContent ?? '') : '';
}

export function atomicPrefix(item: Element): string | null {
  return item.getAttributeNS(item.namespaceURI, 'prefix') ?? item.getAttribute('prefix');
}

/** `message` as the text of a string literal in the rewritten query (no quote or entity in it). */
export function literal(message: string): string {
  return `'${message.replace(/['&]/g, '')}'`;
}

/** error(err:XPTY0004) saying the value bound to `name` does not match `type`. */
export function typeError(name: string, type: string): string {
  return `error(QName('${ERR}', 'XPTY0004'), ${literal(`the value bound to ${name} does not match its declared type ${type}`)})`;
}

/**
 * `expr` checked against `type` with `instance of` (SequenceType matching, no conversion): as a
 * whole (`each` false: a let or prolog variable's value) or item by item (a for variable's).
 */
export function wrapped(each: boolean, v: string, name: string, type: string, expr: string): string {
  const check = `if (${v} instance of ${type}) then ${v} else ${typeError(name, type)}`;
  return each ? `(for ${v} in (${expr}) return ${check})` : `(let ${v} := (${expr}) return ${check})`;
}

/** The span fontoxpath's debug parse records on an expression (its stackTrace element). */
export function traced(
  trace: Element | undefined,
  fail: () => LibrarianError,
): { start: number; end: number } {
  if (!trace || trace.namespaceURI !== FONTO) throw fail();
  const at = (which: string) => {
    const raw = trace.getAttributeNS(FONTO, which);
    if (!raw) throw fail();
    return (JSON.parse(raw) as { offset: number }).offset;
  };
  return { start: at('start'), end: at('end') };
}

/** The proof's last step: `rewritten`, parsed again, is exactly `expected` (false when it does not parse). */
export function parsesTo(rewritten: string, expected: Element, parse: Parse): boolean {
  try {
    return canonical(parse(rewritten)) === canonical(expected);
  } catch {
    return false;
  }
}

/** A name for the rewrite's own variables that the query does not use: `$organism_t<n>`. */
export function freshStem(query: string): string {
  let id = 0;
  while (query.includes(`organism_t${id}`)) id++;
  return `$organism_t${id}`;
}
