/**
 * A map constructor with two entries of the same key is the error XQDY0137 (XQuery 3.1 3.11.1.1);
 * fontoxpath keeps the last entry, and keeps 1 and 1.0e0 as two keys. Duplicate literal keys are
 * refused before running (unsupported.ts); a constructor with a computed key is rewritten to check
 * its keys when it runs:
 *
 *   map { $k: 1, "a": 2 }   ->   (let $m := map { $k: 1, "a": 2 } return
 *                                   if (count(distinct-values(map:keys($m) ! sig(.))) ne 2)
 *                                   then error(XQDY0137) else $m)
 *
 * sig() writes a key as a string equal for two keys exactly when op:same-key holds: numbers by
 * value (NaN the same as NaN), strings, URIs and untyped values by their code points, booleans; a
 * key of another type raises organism:unsupported-map-key (a date's same-key depends on its
 * timezone being there, which this does not write). Fewer distinct signatures than entries is a
 * key given twice. Proved as the other rewrites are (graft.ts): the rewritten text must parse to
 * the original parse with the constructor in the template's hole.
 */
import fontoxpath from 'fontoxpath';
import { Document, type Element } from 'slimdom';
import type { LibrarianError } from '../../src/errors.ts';
import { bodyExpression, childNamed, hole, holes, replaceWith } from './graft.ts';
import { canonical } from './order-by.ts';
import { masked } from './query-text.ts';
import { refuse } from './unsupported.ts';

const FONTO = 'http://fontoxml.com/fontoxpath';
const ERR = 'http://www.w3.org/2005/xqt-errors';
const MAX_MAPS = 32;

function reject(reason: string): LibrarianError {
  return refuse('map constructor with computed keys', reason);
}

function maps(ast: Element): Element[] {
  return [...ast.getElementsByTagNameNS(ast.namespaceURI, 'mapConstructor')];
}

function guarded(map: Element): boolean {
  const item = map.parentElement?.localName === 'letExpr' ? map.parentElement.parentElement : null;
  const name = item && childNamed(childNamed(item, 'typedVariableBinding') ?? item, 'varName');
  return /^organism_m\d+_$/.test(name?.textContent ?? '');
}

/** Two or more entries, one key not a literal, not yet checked. */
function needsCheck(map: Element): boolean {
  const keys = map.children.map((e) => childNamed(e, 'mapKeyExpr')?.children[0]);
  return keys.length > 1 && keys.some((k) => !k || !/ConstantExpr$/.test(k.localName)) && !guarded(map);
}

function template(id: number, map: string, entries: number): string {
  const m = `$organism_m${id}_`;
  const k = `$organism_m${id}k_`;
  return (
    `(let ${m} := ${map} return if (count(distinct-values(for ${k} in map:keys(${m}) return ` +
    `if (${k} instance of xs:decimal or ${k} instance of xs:double or ${k} instance of xs:float) then 'n' || string(xs:double(${k}) + 0e0) ` +
    `else if (${k} instance of xs:string or ${k} instance of xs:anyURI or ${k} instance of xs:untypedAtomic) then 's' || string(${k}) ` +
    `else if (${k} instance of xs:boolean) then 'b' || string(${k}) ` +
    `else error(QName('urn:organism', 'unsupported-map-key'), 'unsupported: map constructor with a computed key of this type'))) ne ${entries}) ` +
    `then error(QName('${ERR}', 'XQDY0137'), 'the map constructor has a key twice') else ${m})`
  );
}

function offset(el: Element | undefined, which: 'start' | 'end'): number {
  const raw = el?.localName === 'stackTrace' ? el.getAttributeNS(FONTO, which) : null;
  if (!raw) throw reject('its place in the query could not be read');
  return (JSON.parse(raw) as { offset: number }).offset;
}

/**
 * The constructor's text span: fontoxpath gives the positions of its first key and last value;
 * the constructor is `map {` before the one and `}` after the other, with only space between.
 */
function span(query: string, index: number): [number, number] {
  const debug = fontoxpath.parseScript(
    query,
    { language: fontoxpath.evaluateXPath.XQUERY_3_1_LANGUAGE, debug: true },
    new Document() as never,
  ) as unknown as Element;
  const entries = maps(debug)[index]?.children ?? [];
  const first = offset(childNamed(entries[0]!, 'mapKeyExpr')?.children[0], 'start');
  const last = offset(childNamed(entries[entries.length - 1]!, 'mapValueExpr')?.children[0], 'end');
  const code = masked(query);
  const open = /map\s*\{\s*$/.exec(code.slice(0, first));
  const close = /^\s*\}/.exec(code.slice(last));
  if (!open || !close) throw reject('its place in the query could not be read');
  return [open.index, last + close[0].length];
}

/** The query with each map constructor with a computed key checked, or null when it has none. */
export function rewriteMapKeys(query: string, ast: Element, parse: (q: string) => Element): string | null {
  let text = query;
  let current = ast;
  for (let n = 0; n <= MAX_MAPS; n++) {
    const all = maps(current);
    let index = all.length - 1;
    while (index >= 0 && !needsCheck(all[index]!)) index--;
    if (index < 0) return n === 0 ? null : text;
    if (n === MAX_MAPS) throw reject(`more than ${MAX_MAPS} of them`);
    const map = all[index]!;
    let id = 0;
    while (text.includes(`organism_m${id}`)) id++;
    const [start, end] = span(text, index);
    const rewritten =
      text.slice(0, start) + template(id, text.slice(start, end), map.children.length) + text.slice(end);
    const holed = bodyExpression(parse(template(id, hole('map'), map.children.length)));
    const expected = current.cloneNode(true) as Element;
    replaceWith(holes(holed).get('map')!, [maps(expected)[index]!]);
    const original = maps(expected)[index]!;
    // As a step's primary expression (map { ... }?key), the parenthesized template is a sequenceExpr.
    let replacement = holed;
    if (original.parentElement?.localName === 'filterExpr') {
      replacement = original.ownerDocument!.createElementNS(original.namespaceURI, 'xqx:sequenceExpr');
      replacement.appendChild(original.ownerDocument!.importNode(holed, true));
    }
    replaceWith(original, [replacement]);
    let got: string;
    try {
      current = parse(rewritten);
      got = canonical(current);
    } catch {
      throw reject('the constructor could not be read');
    }
    if (got !== canonical(expected)) throw reject('the constructor could not be read');
    text = rewritten;
  }
  return text;
}
