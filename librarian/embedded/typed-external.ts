/**
 * A typed external variable (XQuery 3.1 5.16): `declare variable $x as T external;`, or with a
 * default, `external := E`. fontoxpath ignores the type. BaseX, the reference, converts a value
 * the caller binds to T: an atomic T by casting each item (1.5e0 bound to xs:integer is 1, "a"
 * raises FORG0001), a sequence of the wrong length raises XPTY0004, and so does an atomic value
 * bound to a node, map or array type. A default is checked as a let binding is, with no conversion
 * (`as xs:double external := 1` raises XPTY0004). The declaration is rewritten into three, and
 * evaluate.ts binds the caller's value to the first two by name (BOUND_PREFIX, VALUE_PREFIX):
 *
 *   declare variable $x as T external := E;
 *   ->  declare variable $organism_b_x external := false();   (true() when the caller binds x)
 *       declare variable $organism_x_x external := ();        (the caller's value)
 *       declare variable $x := if ($organism_b_x) then CONVERTED else CHECKED;
 *
 * CONVERTED is the bound value with its length checked and each item cast as T (T atomic), kept
 * (item(), xs:anyAtomicType) or refused with XPTY0004 (a node, map or array type: the caller's
 * values are atomic). CHECKED is E checked as typed-binding.ts checks a let variable, or, with no
 * default, XPDY0002 as BaseX raises for an external variable nobody bound. fontoxpath evaluates a
 * prolog variable where it is used, as BaseX does: an unused one is never converted or checked.
 *
 * Proved as the other rewrites are: the rewritten text must parse to the original parse with the
 * declaration replaced by the template's three, E's parse in the template's hole.
 */
import type { Element } from 'slimdom';
import type { LibrarianError } from '../../src/errors.ts';
import { parseDebug } from './flwor.ts';
import { childNamed, hole, holes, replaceWith } from './graft.ts';
import { masked } from './query-text.ts';
import {
  atomicPrefix,
  checkable,
  ERR,
  freshStem,
  itemType,
  literal,
  occurrence,
  type Parse,
  parsesTo,
  traced,
  typeError,
  wrapped,
} from './typed-check.ts';
import { refuse } from './unsupported.ts';

/** The external variable evaluate.ts sets to true() when the caller binds `<name>`. */
export const BOUND_PREFIX = 'organism_b_';
/** The external variable evaluate.ts binds the caller's `<name>` to. */
export const VALUE_PREFIX = 'organism_x_';

/**
 * Atomic types a bound value is cast to: those whose casts from a string, an integer, a double and
 * a boolean fontoxpath was measured to make as BaseX does (same value or same error code). Left
 * out: the unsigned and non-negative integer types (a negative fraction casts to 0 in fontoxpath,
 * FORG0001 in BaseX), xs:QName and xs:NOTATION (casts from a string that need the static context).
 */
const CASTS = new Set([
  'string',
  'boolean',
  'decimal',
  'integer',
  'double',
  'float',
  'untypedAtomic',
  'anyURI',
  'int',
  'long',
  'short',
  'byte',
  'positiveInteger',
  'nonPositiveInteger',
  'negativeInteger',
  'normalizedString',
  'token',
  'language',
  'NCName',
  'Name',
  'ID',
  'date',
  'dateTime',
  'time',
  'duration',
  'dayTimeDuration',
  'yearMonthDuration',
  'gYear',
  'hexBinary',
  'base64Binary',
]);

/** Node, map and array types: an atomic value never matches them (the check needs no instance of). */
const NOT_ATOMIC = new Set([
  'anyKindTest',
  'elementTest',
  'attributeTest',
  'textTest',
  'commentTest',
  'piTest',
  'documentTest',
  'anyMapTest',
  'anyArrayTest',
]);

interface External {
  /** The varDecl (of the plain parse). */
  item: Element;
  /** The variable's name with its $. */
  name: string;
  /** Its typeDeclaration. */
  declared: Element;
}

function rejection(type: string, reason: string): LibrarianError {
  return refuse(
    `a type declaration on an external variable${type ? ` (as ${type})` : ''}`,
    `${reason}; without the \`as\` type the query runs`,
  );
}

/** The bound value converted to the declared type, or undefined when this type is not handled. */
function converted(
  declared: Element,
  name: string,
  type: string,
  value: string,
  v: string,
): string | undefined {
  const item = itemType(declared);
  if (!item) return undefined;
  const i = `${v}i_`;
  let items: string;
  if (item.localName === 'anyItemType') items = v;
  else if (item.localName === 'atomicType' && atomicPrefix(item) === 'xs') {
    const local = item.textContent ?? '';
    if (local === 'anyAtomicType') items = v;
    else if (CASTS.has(local)) items = `(for ${i} in ${v} return ${i} cast as xs:${local})`;
    else return undefined;
  } else if (NOT_ATOMIC.has(item.localName))
    items = `(if (exists(${v})) then ${typeError(name, type)} else ())`;
  else return undefined;
  const length = { '': `count(${v}) eq 1`, '?': `count(${v}) le 1`, '+': `exists(${v})`, '*': 'true()' }[
    occurrence(declared)
  ];
  if (length === undefined) return undefined;
  return `(let ${v} := ${value} return if (${length}) then ${items} else ${typeError(name, type)})`;
}

/** The three declarations that replace the typed one, around `value` (E, or its hole). */
function replacement(o: { name: string; local: string; converted: string; fallback: string }): string {
  const bound = `$${BOUND_PREFIX}${o.local}`;
  return (
    `declare variable ${bound} external := false(); ` +
    `declare variable $${VALUE_PREFIX}${o.local} external := (); ` +
    `declare variable ${o.name} := if (${bound}) then ${o.converted} else ${o.fallback}`
  );
}

/** The varDecl of `$local` in fontoxpath's debug parse (its expressions carry their spans). */
function debugDecl(query: string, local: string): Element | undefined {
  const ast = parseDebug(query);
  for (const decl of ast.getElementsByTagNameNS(ast.namespaceURI, 'varDecl')) {
    const varName = childNamed(decl, 'varName');
    if (varName?.textContent === local && !varName.getAttribute('prefix')) return decl;
  }
  return undefined;
}

export function rewriteExternal(query: string, ast: Element, parse: Parse, at: External): string {
  const { item, name, declared } = at;
  const local = name.slice(1);
  const code = masked(query);
  const escaped = name.replace(/[.$]/g, (c) => `\\${c}`);
  const m = new RegExp(String.raw`(declare\s+variable\s+${escaped}\s+as\s+)([^$]*?)\s*external\b`).exec(code);
  // As written (the masked text blanks comments): for the refusal's name and the checks' messages.
  const type = m ? query.slice(m.index + m[1]!.length, m.index + m[1]!.length + m[2]!.length).trim() : '';
  const fail = (reason = 'the declaration could not be read') => rejection(type, reason);
  if (!m || name.includes(':')) throw fail(m ? 'a variable with a namespace prefix' : undefined);
  if (query.includes(BOUND_PREFIX + local) || query.includes(VALUE_PREFIX + local)) {
    throw fail('a name the check uses itself');
  }
  const stem = freshStem(query);
  const convert = converted(declared, name, type, `$${VALUE_PREFIX}${local}`, `${stem}v_`);
  if (convert === undefined) throw fail('its type is one a bound value cannot be converted to here');

  const defaultValue = childNamed(childNamed(item, 'external')!, 'varValue');
  let end = m.index + m[0].length;
  let fallback = `error(QName('${ERR}', 'XPDY0002'), ${literal(`no value is bound to the external variable ${name}`)})`;
  let templateFallback = fallback;
  if (defaultValue) {
    if (!checkable(declared)) throw fail("its type is one the embedded engine's instance of cannot check");
    const decl = debugDecl(query, local);
    const span = traced(
      decl && childNamed(childNamed(decl, 'external') ?? decl, 'varValue')?.children[0],
      () => fail(),
    );
    if (!/^\s*:=\s*$/.test(code.slice(end, span.start))) throw fail();
    fallback = wrapped(false, `${stem}w_`, name, type, query.slice(span.start, span.end));
    templateFallback = wrapped(false, `${stem}w_`, name, type, hole('e'));
    end = span.end;
  }
  const rewritten =
    query.slice(0, m.index) + replacement({ name, local, converted: convert, fallback }) + query.slice(end);

  // The expected parse: the original with the declaration replaced by the template's three.
  let template: Element;
  try {
    template = parse(`${replacement({ name, local, converted: convert, fallback: templateFallback })}; ()`);
  } catch {
    throw fail();
  }
  const decls = [...template.getElementsByTagNameNS(template.namespaceURI, 'varDecl')];
  if (decls.length !== 3) throw fail();
  const expected = ast.cloneNode(true) as Element;
  const target = [...expected.getElementsByTagNameNS(expected.namespaceURI, 'varDecl')].find(
    (d) => childNamed(d, 'varName')?.textContent === local && childNamed(d, 'external'),
  );
  if (!target) throw fail();
  if (defaultValue) {
    const found = holes(decls[2]!).get('e');
    const given = childNamed(childNamed(target, 'external')!, 'varValue');
    if (!found || !given) throw fail();
    replaceWith(found, [...given.children]);
  }
  replaceWith(target, decls);
  if (!parsesTo(rewritten, expected, parse)) throw fail();
  return rewritten;
}

/**
 * For each typed external variable rewritten in `text`, by name: a query that converts a bound
 * value alone (`$organism_x_<name>` its one external variable). BaseX converts a bound value when
 * it is bound, used by the query or not ("a" bound to an unused xs:integer raises FORG0001);
 * fontoxpath evaluates the rewritten declaration only where it is used, so evaluate.ts runs this
 * first, for its error.
 */
export function conversionChecks(text: string): Map<string, string> {
  const checks = new Map<string, string>();
  const code = masked(text);
  const head = new RegExp(
    String.raw`declare variable \$${VALUE_PREFIX}([\w.-]+) external := \(\); declare variable \$([\w.-]+) := if \(\$${BOUND_PREFIX}([\w.-]+)\) then \(`,
    'g',
  );
  for (const m of code.matchAll(head)) {
    const [, a, b, c] = m;
    if (a !== b || b !== c) continue;
    const start = m.index + m[0].length - 1;
    let depth = 0;
    let end = start;
    for (; end < code.length; end++) {
      if (code[end] === '(') depth++;
      else if (code[end] === ')' && --depth === 0) break;
    }
    if (depth !== 0) continue;
    checks.set(a!, `declare variable $${VALUE_PREFIX}${a} external; ${text.slice(start, end + 1)}`);
  }
  return checks;
}
