/**
 * The proof shared by the rewrites that replace a construct fontoxpath cannot run with an
 * expression it can (string-constructor.ts, group-by.ts): the expected parse of the rewritten
 * query is built from the original parse, by parsing the rewrite's template with holes where the
 * original's pieces go and grafting those pieces (parsed by fontoxpath, not read from the text)
 * into the holes. The text that runs must parse to exactly that, or the query is refused.
 */
import type { Element } from 'slimdom';

const HOLE_URI = 'urn:organism:hole';

/** A hole in a template's text: a call fontoxpath parses as one functionCallExpr named `name`. */
export function hole(name: string): string {
  return `Q{${HOLE_URI}}${name}()`;
}

export function childNamed(el: Element, localName: string): Element | undefined {
  return el.children.find((c) => c.localName === localName);
}

/** The expression a one-expression query's parse holds (module/mainModule/queryBody/expr). */
export function bodyExpression(ast: Element): Element {
  const body = ast.getElementsByTagNameNS(ast.namespaceURI, 'queryBody')[0];
  const expr = body?.children[0];
  if (!expr) throw new Error('template has no body');
  return expr;
}

/** The hole calls under `el`, by name (each name used once per template). */
export function holes(el: Element): Map<string, Element> {
  const out = new Map<string, Element>();
  for (const call of el.getElementsByTagNameNS(el.namespaceURI, 'functionCallExpr')) {
    const name = childNamed(call, 'functionName');
    const uri = name?.getAttributeNS(name.namespaceURI, 'URI') ?? name?.getAttribute('URI');
    if (uri === HOLE_URI) out.set(name!.textContent ?? '', call);
  }
  return out;
}

/** Replaces `target` with copies of `pieces` (adopted into the target's document). */
export function replaceWith(target: Element, pieces: Element[]): void {
  const parent = target.parentNode!;
  const doc = target.ownerDocument!;
  for (const piece of pieces) parent.insertBefore(doc.importNode(piece, true), target);
  parent.removeChild(target);
}
