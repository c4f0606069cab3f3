/**
 * A type declaration on a `for` or `let` variable (XQuery 3.1 3.12.2, 3.12.3), on a prolog
 * variable (5.16) or on a `some`/`every` variable (3.15), which fontoxpath parses and then ignores
 * (`let $x as xs:string := 1 return $x` answered 1, `declare variable $v as xs:string := 1; $v`
 * too). Each typed binding is rewritten into an untyped one whose value is checked first:
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
 *   declare variable $v as T := E;  ->  declare variable $v := (let $w := (E) return
 *                                          if ($w instance of T) then $w else error(err:XPTY0004));
 *
 * A prolog variable is not forced: fontoxpath, like BaseX, evaluates it (and so checks it) only
 * where the query uses it (`declare variable $x as xs:integer := (); 1` answers 1 on both). A
 * typed external variable (`external`, or `external := default`) is refused by name: its value may
 * come from the caller's variables, bound as values where no rewrite of the text can check them.
 *
 * A `some`/`every` variable is checked where it is used, as BaseX checks it (`some $x as
 * xs:string in (1, 2) satisfies true()` is true there): the last in clause is renamed and the
 * variable bound again, checked, by a let around the satisfies expression, which fontoxpath
 * evaluates only where it is used (rewriteLastQuantified below). A typed clause before the last
 * (a later clause may use its variable) and a prefixed variable (fontoxpath runs no let of one)
 * are checked as a for clause is, each item of E in turn.
 *
 * Only the types for which fontoxpath's `instance of` was measured right are rewritten (atomic
 * xs: types, item(), node(), element() and attribute() by name or *, text(), comment(),
 * processing-instruction(), map(*), array(*), with any occurrence indicator); any other type
 * (empty-sequence(), function types, typed map and array tests, element(a, T), document-node(),
 * parenthesized types: fontoxpath cannot evaluate `instance of` with most of them, and says an
 * untyped element is an element(a, xs:string)), and a typed for variable with `allowing empty`,
 * is refused by name, whatever kind of variable it declares.
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
import { checkable, freshStem, type Parse, parsesTo, traced, wrapped } from './typed-check.ts';
import { rewriteExternal } from './typed-external.ts';
import { refuse } from './unsupported.ts';

const NAME = String.raw`\$[\w.-]+(?::[\w.-]+)?`;
const MAX_BINDINGS = 32;

type Kind = 'for' | 'let' | 'some' | 'every' | 'declare';

/** Where each kind of binding keeps its expression (E), and the element that binds. */
const CONTAINER: Record<string, string> = {
  forClauseItem: 'forExpr',
  letClauseItem: 'letExpr',
  quantifiedExprInClause: 'sourceExpr',
  varDecl: 'varValue',
};

const LABEL: Record<Kind, string> = {
  for: 'a for variable',
  let: 'a let variable',
  some: 'a some variable',
  every: 'an every variable',
  declare: 'a prolog variable (declare variable)',
};

function reject(kind: Kind, type: string, reason = 'the binding could not be read'): LibrarianError {
  const feature = `a type declaration on ${LABEL[kind]}${type ? ` (as ${type})` : ''}`;
  return refuse(feature, `${reason}; without the \`as\` type the query runs`);
}

/**
 * The typed bindings (forClauseItem, letClauseItem, quantifiedExprInClause, and varDecl in the
 * prolog, external or not) in document order.
 */
function typedItems(ast: Element): Element[] {
  const out: Element[] = [];
  const walk = (el: Element) => {
    for (const c of el.children) {
      if (c.localName in CONTAINER && declaration(c)) out.push(c);
      walk(c);
    }
  };
  walk(ast);
  return out;
}

function kindOf(item: Element): Kind {
  switch (item.localName) {
    case 'forClauseItem':
      return 'for';
    case 'letClauseItem':
      return 'let';
    case 'varDecl':
      return 'declare';
    default:
      return childNamed(item.parentElement!, 'quantifier')?.textContent === 'every' ? 'every' : 'some';
  }
}

/**
 * The item's type declaration: fontoxpath puts a for variable's inside its varName, and a
 * prolog variable's beside its varName (no typedVariableBinding).
 */
function declaration(item: Element): Element | undefined {
  if (item.localName === 'varDecl') return childNamed(item, 'typeDeclaration');
  const binding = childNamed(item, 'typedVariableBinding');
  if (!binding) return undefined;
  return (
    childNamed(binding, 'typeDeclaration') ??
    childNamed(childNamed(binding, 'varName') ?? binding, 'typeDeclaration')
  );
}

/** E's span: the position fontoxpath records on the binding expression. */
function span(item: Element, fail: () => LibrarianError): { start: number; end: number } {
  return traced(childNamed(item, CONTAINER[item.localName]!)?.children[0], fail);
}

/** E checked against its declared type: as a whole for a let or prolog variable, item by item else. */
function checked(kind: Kind, v: string, name: string, type: string, expr: string): string {
  return wrapped(kind !== 'let' && kind !== 'declare', v, name, type, expr);
}

/** The binding as the template writes it, untyped, around `value`. */
function template(kind: Kind, name: string, value: string, force: string): string {
  switch (kind) {
    case 'declare':
      return `declare variable ${name} := ${value}; ()`;
    case 'some':
    case 'every':
      return `${kind} ${name} in ${value} satisfies true()`;
    default:
      return `${kind} ${name} ${kind === 'let' ? ':=' : 'in'} ${value} where ${force} return ()`;
  }
}

/** The template's binding item (the one element CONTAINER names the expression of). */
function templateItem(kind: Kind, parsed: Element): Element | undefined {
  if (kind === 'declare') return parsed.getElementsByTagNameNS(parsed.namespaceURI, 'varDecl')[0];
  const body = bodyExpression(parsed);
  if (kind === 'some' || kind === 'every') return childNamed(body, 'quantifiedExprInClause');
  return body.children[0]?.children[0];
}

/** A template parsed; one fontoxpath cannot parse (a prefixed variable name in it) is refused. */
function parseTemplate(parse: Parse, text: string, fail: (reason?: string) => LibrarianError): Element {
  try {
    return parse(text);
  } catch {
    throw fail('a variable with a namespace prefix');
  }
}

/** The first typed binding rewritten: the new text, proved. */
function rewriteOne(query: string, ast: Element, parse: Parse): string {
  const item = typedItems(ast)[0]!;
  const kind = kindOf(item);
  let typeText = '';
  const fail = (reason?: string) => reject(kind, typeText, reason);
  const declared = declaration(item)!;
  // A for variable's varName holds its type declaration: the name is read without it.
  const nameEl = childNamed(childNamed(item, 'typedVariableBinding') ?? item, 'varName')?.cloneNode(true) as
    | Element
    | undefined;
  if (!nameEl) throw fail();
  for (const c of [...nameEl.children]) nameEl.removeChild(c);
  const name = varName(nameEl, () => fail());
  if (kind === 'declare' && childNamed(item, 'external')) {
    return rewriteExternal(query, ast, parse, { item, name, declared });
  }

  const debugItem = typedItems(parseDebug(query))[0];
  if (!debugItem) throw fail();
  const { start, end } = span(debugItem, () => fail());
  const code = masked(query).slice(0, start);
  const tail =
    kind === 'let' || kind === 'declare'
      ? String.raw`\s*:=\s*$`
      : kind === 'for'
        ? String.raw`\s*(?:allowing\s+empty\s*)?(?:at\s*${NAME}\s*)?in\s*$`
        : String.raw`\s*in\s*$`;
  const m = new RegExp(String.raw`(${NAME})(\s+as\s+)([^$]*?)${tail}`).exec(code);
  if (!m || m[1] !== name) throw fail();
  const typeStart = m.index + m[1].length + m[2]!.length;
  const typeEnd = typeStart + m[3]!.length;
  typeText = query.slice(typeStart, typeEnd).trim();
  if (!checkable(declared)) throw fail("its type is one the embedded engine's instance of cannot check");
  if (childNamed(item, 'allowingEmpty')) throw fail('with allowing empty');

  const stem = freshStem(query);
  const v = `${stem}v_`;
  const clauses = (debugItem.parentElement?.children ?? []).filter(
    (c) => c.localName === debugItem.localName,
  );
  // fontoxpath runs no let of a prefixed variable: such a one is checked as a clause before the last.
  if (
    (kind === 'some' || kind === 'every') &&
    clauses[clauses.length - 1] === debugItem &&
    !name.includes(':')
  ) {
    return rewriteLastQuantified(query, ast, parse, {
      debugItem,
      name,
      typeText,
      declared,
      raw: `${stem}q_`,
      v,
      nameStart: m.index,
      typeEnd,
      fail,
    });
  }
  // fontoxpath evaluates a let variable only where it is used: a where clause after the let
  // clause asks for the checked value once per tuple (it is never false), so the check is made
  // as the binding is, used or not. A prolog variable is not forced: BaseX, like fontoxpath,
  // evaluates (and checks) it only where it is used.
  const force = `exists((${name}, 1))`;
  const clauseItems = debugItem.parentElement?.children ?? [];
  const clauseEnd = kind === 'let' ? span(clauseItems[clauseItems.length - 1]!, () => fail()).end : end;
  const rewritten =
    `${query.slice(0, m.index + m[1].length)} ${query.slice(typeEnd, start).trimStart()}` +
    checked(kind, v, name, typeText, query.slice(start, end)) +
    query.slice(end, clauseEnd) +
    (kind === 'let' ? ` where ${force} ` : '') +
    query.slice(clauseEnd);

  // The expected parse: the binding untyped, E in the template's hole, the let's where clause.
  // A prolog variable's name stays where it is (only its value is replaced): the template names
  // it without a prefix, which it could not resolve.
  const templateName = kind === 'declare' ? `${stem}d_` : name;
  const parsedTemplate = parseTemplate(
    parse,
    template(kind, templateName, checked(kind, v, name, typeText, hole('e')), force),
    fail,
  );
  const tItem = templateItem(kind, parsedTemplate);
  const holed = tItem && childNamed(tItem, CONTAINER[item.localName]!)?.children[0];
  const where = kind === 'let' ? childNamed(bodyExpression(parsedTemplate), 'whereClause') : undefined;
  const found = holed && holes(holed).get('e');
  const tested = holed?.getElementsByTagNameNS(holed.namespaceURI, 'instanceOfExpr')[0];
  const sequenceType = tested && childNamed(tested, 'sequenceType');
  if (!holed || (kind === 'let' && !where) || !found || !sequenceType) throw fail();
  const asWritten = (el: Element) => [...el.children].map((c) => canonical(c)).join('');
  if (asWritten(sequenceType) !== asWritten(declared)) throw fail();

  const expected = ast.cloneNode(true) as Element;
  const target = typedItems(expected)[0]!;
  const container = childNamed(target, CONTAINER[target.localName]!)!;
  replaceWith(found, [...container.children]);
  for (const c of [...container.children]) container.removeChild(c);
  const doc = expected.ownerDocument!;
  container.appendChild(doc.importNode(holed, true));
  declaration(target)!.parentNode!.removeChild(declaration(target)!);
  if (where) {
    const clause = target.parentElement!;
    clause.parentNode!.insertBefore(doc.importNode(where, true), clause.nextSibling);
  }
  if (!parsesTo(rewritten, expected, parse)) throw fail();
  return rewritten;
}

/**
 * The last in clause of a some or every expression, typed: checked where its variable is used,
 * as BaseX checks it (`some $x as xs:string in (1, 2) satisfies true()` is true there):
 *
 *   some $x as T in E satisfies P  ->  some $q in E satisfies
 *                                        (let $x := (let $v := ($q) return
 *                                           if ($v instance of T) then $v else error(err:XPTY0004))
 *                                         return (P))
 *
 * fontoxpath evaluates the let only where P uses $x. Proved as the others: the rewritten text must
 * parse to the original parse with the clause's variable renamed and untyped and P in the
 * template's hole.
 */
function rewriteLastQuantified(
  query: string,
  ast: Element,
  parse: Parse,
  at: {
    debugItem: Element;
    name: string;
    typeText: string;
    declared: Element;
    raw: string;
    v: string;
    nameStart: number;
    typeEnd: number;
    fail: (reason?: string) => LibrarianError;
  },
): string {
  const { name, typeText, raw, v, fail } = at;
  const predicate = childNamed(at.debugItem.parentElement!, 'predicateExpr')?.children[0];
  const { start, end } = traced(predicate, () => fail());
  if (start < at.typeEnd) throw fail();
  const lazy = (p: string) => `(let ${name} := ${wrapped(false, v, name, typeText, raw)} return (${p}))`;
  const rewritten =
    query.slice(0, at.nameStart) +
    raw +
    query.slice(at.typeEnd, start) +
    lazy(query.slice(start, end)) +
    query.slice(end);

  const quantified = bodyExpression(
    parseTemplate(parse, `some ${raw} in () satisfies ${lazy(hole('p'))}`, fail),
  );
  const rawName = childNamed(
    childNamed(quantified, 'quantifiedExprInClause') ?? quantified,
    'typedVariableBinding',
  );
  const holed = childNamed(quantified, 'predicateExpr')?.children[0];
  const found = holed && holes(holed).get('p');
  const tested = holed?.getElementsByTagNameNS(holed.namespaceURI, 'instanceOfExpr')[0];
  const sequenceType = tested && childNamed(tested, 'sequenceType');
  const rawVar = rawName && childNamed(rawName, 'varName');
  if (!holed || !found || !sequenceType || !rawVar) throw fail();
  const asWritten = (el: Element) => [...el.children].map((c) => canonical(c)).join('');
  if (asWritten(sequenceType) !== asWritten(at.declared)) throw fail();

  const expected = ast.cloneNode(true) as Element;
  const target = typedItems(expected)[0]!;
  const doc = expected.ownerDocument!;
  const binding = childNamed(target, 'typedVariableBinding')!;
  binding.replaceChild(doc.importNode(rawVar, true), childNamed(binding, 'varName')!);
  binding.removeChild(declaration(target)!);
  const container = childNamed(target.parentElement!, 'predicateExpr');
  if (!container) throw fail();
  replaceWith(found, [...container.children]);
  for (const c of [...container.children]) container.removeChild(c);
  container.appendChild(doc.importNode(holed, true));
  if (!parsesTo(rewritten, expected, parse)) throw fail();
  return rewritten;
}

/**
 * The query with each typed for, let, some, every and prolog variable rewritten into a checked one, or null when it has
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
  throw refuse('a type declaration on a variable', 'too many typed bindings');
}
