/**
 * A type declaration on a `for` or `let` variable (XQuery 3.1 3.12.2, 3.12.3), which fontoxpath
 * parses and then ignores (`let $x as xs:string := 1 return $x` answered 1). Each typed binding is
 * rewritten into an untyped one whose value is checked first:
 *
 *   let $x as T := E             ->  let $x := (let $v := E return
 *                                       if ($v instance of T) then $v else error(err:XPTY0004))
 *                                     where exists(($x, 1))
 *   for $x as T at $p in E       ->  for $x at $p in (for $v in E return
 *                                       if ($v instance of T) then $v else error(err:XPTY0004))
 *
 * Why it means the same: a let variable's value must match T by SequenceType matching, with no
 * function conversion (no atomization, no promotion), or the query raises XPTY0004; that is what
 * `instance of T` decides. A for variable is bound to each item of E in turn, and each item (a
 * sequence of one) must match T as written, occurrence indicator included; the checked sequence
 * holds the same items in the same order, so `at $p` numbers them as before. The where clause
 * after a let clause is never false; it is there because fontoxpath evaluates a let variable only
 * where it is used, and the binding's check must be made for each tuple, used or not (BaseX
 * raises XPTY0004 for an unused one too).
 *
 * Only the types for which fontoxpath's `instance of` was measured right are rewritten (atomic
 * xs: types, item(), node(), element() and attribute() by name or *, text(), comment(),
 * processing-instruction(), map(*), array(*), with any occurrence indicator); any other type
 * (empty-sequence(), function types, typed map and array tests, element(a, T), document-node(),
 * parenthesized types: fontoxpath cannot evaluate `instance of` with most of them, and says an
 * untyped element is an element(a, xs:string)), and a typed for variable with `allowing empty`,
 * is refused by name.
 *
 * The rewrite is made on the text (E's span from fontoxpath's positions) and proved as the others
 * are (graft.ts): the rewritten text must parse to the original parse with the binding's type
 * declaration removed and E replaced by the template whose hole holds E's parse, and the template's
 * `instance of` type must parse to the declared type.
 */
import type { Element } from 'slimdom';
import type { LibrarianError } from '../../src/errors.ts';
import { parseDebug, varName } from './flwor.ts';
import { bodyExpression, childNamed, hole, holes, replaceWith } from './graft.ts';
import { canonical } from './order-by.ts';
import { masked } from './query-text.ts';
import { refuse } from './unsupported.ts';

const FONTO = 'http://fontoxml.com/fontoxpath';
const ERR = 'http://www.w3.org/2005/xqt-errors';
const NAME = String.raw`\$[\w.-]+(?::[\w.-]+)?`;
const MAX_BINDINGS = 32;

type Kind = 'for' | 'let';
type Parse = (query: string) => Element;

function reject(kind: Kind, type: string, reason = 'the binding could not be read'): LibrarianError {
  const feature = `a type declaration on a ${kind} variable${type ? ` (as ${type})` : ''}`;
  return refuse(feature, `${reason}; without the \`as\` type the query runs`);
}

/** The typed for and let bindings (forClauseItem, letClauseItem) in document order. */
function typedItems(ast: Element): Element[] {
  const out: Element[] = [];
  const walk = (el: Element) => {
    for (const c of el.children) {
      if ((c.localName === 'forClauseItem' || c.localName === 'letClauseItem') && declaration(c)) out.push(c);
      walk(c);
    }
  };
  walk(ast);
  return out;
}

/** The item's type declaration: fontoxpath puts a for variable's inside its varName. */
function declaration(item: Element): Element | undefined {
  const binding = childNamed(item, 'typedVariableBinding');
  if (!binding) return undefined;
  return (
    childNamed(binding, 'typeDeclaration') ??
    childNamed(childNamed(binding, 'varName') ?? binding, 'typeDeclaration')
  );
}

/** Item types whose `instance of` fontoxpath was measured to answer right. */
function checkable(type: Element): boolean {
  const parts = [...type.children];
  const last = parts[parts.length - 1];
  if (last?.localName === 'occurrenceIndicator') parts.pop();
  if (parts.length !== 1) return false;
  const item = parts[0]!;
  switch (item.localName) {
    case 'atomicType':
      return (item.getAttributeNS(item.namespaceURI, 'prefix') ?? item.getAttribute('prefix')) === 'xs';
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

/** E's span: the position fontoxpath records on the binding expression. */
function span(item: Element, fail: () => LibrarianError): { start: number; end: number } {
  const trace = childNamed(item, item.localName === 'forClauseItem' ? 'forExpr' : 'letExpr')?.children[0];
  if (!trace || trace.namespaceURI !== FONTO) throw fail();
  const at = (which: string) => {
    const raw = trace.getAttributeNS(FONTO, which);
    if (!raw) throw fail();
    return (JSON.parse(raw) as { offset: number }).offset;
  };
  return { start: at('start'), end: at('end') };
}

function wrapped(kind: Kind, v: string, name: string, type: string, expr: string): string {
  const message = `the value bound to ${name} does not match its declared type ${type}`.replace(/['&]/g, '');
  const check = `if (${v} instance of ${type}) then ${v} else error(QName('${ERR}', 'XPTY0004'), '${message}')`;
  return kind === 'let'
    ? `(let ${v} := (${expr}) return ${check})`
    : `(for ${v} in (${expr}) return ${check})`;
}

/** The first typed binding rewritten: the new text, proved. */
function rewriteOne(query: string, ast: Element, parse: Parse): string {
  const item = typedItems(ast)[0]!;
  const kind: Kind = item.localName === 'forClauseItem' ? 'for' : 'let';
  let typeText = '';
  const fail = (reason?: string) => reject(kind, typeText, reason);
  const declared = declaration(item)!;
  // A for variable's varName holds its type declaration: the name is read without it.
  const nameEl = childNamed(childNamed(item, 'typedVariableBinding')!, 'varName')!.cloneNode(true) as Element;
  for (const c of [...nameEl.children]) nameEl.removeChild(c);
  const name = varName(nameEl, () => fail());

  const debugItem = typedItems(parseDebug(query))[0];
  if (!debugItem) throw fail();
  const { start, end } = span(debugItem, () => fail());
  const code = masked(query).slice(0, start);
  const tail =
    kind === 'let'
      ? String.raw`\s*:=\s*$`
      : String.raw`\s*(?:allowing\s+empty\s*)?(?:at\s*${NAME}\s*)?in\s*$`;
  const m = new RegExp(String.raw`(${NAME})(\s+as\s+)([^$]*?)${tail}`).exec(code);
  if (!m || m[1] !== name) throw fail();
  const typeStart = m.index + m[1].length + m[2]!.length;
  const typeEnd = typeStart + m[3]!.length;
  typeText = query.slice(typeStart, typeEnd).trim();
  if (!checkable(declared)) throw fail("its type is one the embedded engine's instance of cannot check");
  if (childNamed(item, 'allowingEmpty')) throw fail('with allowing empty');

  let id = 0;
  while (query.includes(`organism_t${id}`)) id++;
  const v = `$organism_t${id}v_`;
  // fontoxpath evaluates a let variable only where it is used: a where clause after the let
  // clause asks for the checked value once per tuple (it is never false), so the check is made
  // as the binding is, used or not.
  const force = `exists((${name}, 1))`;
  const clauseItems = debugItem.parentElement?.children ?? [];
  const clauseEnd = kind === 'let' ? span(clauseItems[clauseItems.length - 1]!, () => fail()).end : end;
  const rewritten =
    `${query.slice(0, m.index + m[1].length)} ${query.slice(typeEnd, start).trimStart()}` +
    wrapped(kind, v, name, typeText, query.slice(start, end)) +
    query.slice(end, clauseEnd) +
    (kind === 'let' ? ` where ${force} ` : '') +
    query.slice(clauseEnd);

  // The expected parse: the binding untyped, E in the template's hole, the let's where clause.
  const flwor = bodyExpression(
    parse(
      `${kind} ${name} ${kind === 'let' ? ':=' : 'in'} ${wrapped(kind, v, name, typeText, hole('e'))} where ${force} return ()`,
    ),
  );
  const templateItem = flwor.children[0]?.children[0];
  const holed = templateItem && childNamed(templateItem, kind === 'for' ? 'forExpr' : 'letExpr')?.children[0];
  const where = childNamed(flwor, 'whereClause');
  const found = holed && holes(holed).get('e');
  const tested = holed?.getElementsByTagNameNS(holed.namespaceURI, 'instanceOfExpr')[0];
  const sequenceType = tested && childNamed(tested, 'sequenceType');
  if (!holed || !where || !found || !sequenceType) throw fail();
  const asWritten = (el: Element) => [...el.children].map((c) => canonical(c)).join('');
  if (asWritten(sequenceType) !== asWritten(declared)) throw fail();

  const expected = ast.cloneNode(true) as Element;
  const target = typedItems(expected)[0]!;
  const container = childNamed(target, kind === 'for' ? 'forExpr' : 'letExpr')!;
  replaceWith(found, [...container.children]);
  for (const c of [...container.children]) container.removeChild(c);
  const doc = expected.ownerDocument!;
  container.appendChild(doc.importNode(holed, true));
  declaration(target)!.parentNode!.removeChild(declaration(target)!);
  if (kind === 'let') {
    const clause = target.parentElement!;
    clause.parentNode!.insertBefore(doc.importNode(where, true), clause.nextSibling);
  }
  let got: string;
  try {
    got = canonical(parse(rewritten));
  } catch {
    throw fail();
  }
  if (got !== canonical(expected)) throw fail();
  return rewritten;
}

/**
 * The query with each typed for and let binding rewritten into a checked one, or null when it has
 * none. Throws librarian.unsupported naming the binding's type when one cannot be rewritten or proved.
 */
export function rewriteTypedBindings(query: string, ast: Element, parse: Parse): string | null {
  if (typedItems(ast).length === 0) return null;
  let text = query;
  let current = ast;
  for (let n = 0; n < MAX_BINDINGS; n++) {
    text = rewriteOne(text, current, parse);
    current = parse(text);
    if (typedItems(current).length === 0) return text;
  }
  throw refuse('a type declaration on a for or let variable', 'too many typed bindings');
}
