/**
 * `order by` with several keys, which fontoxpath refuses ("More than one order spec is not
 * supported"), rewritten into one `order by` clause per key, the last key first:
 *
 *   order by $a, $b descending   ->   order by $b descending order by $a
 *
 * Why this gives the same order: each order by clause reorders the tuple stream, and fontoxpath
 * sorts one key with an insertion sort that swaps only on `gt` (stable); a descending key is that
 * ascending result read backwards, so ties come out reversed. A clause for key i therefore keeps
 * its input's order among its ties, reversed when it is descending; sorting by the keys from the
 * last to the first, with key i's direction flipped once for each descending clause that runs
 * after it, leaves ties of key 1 ordered by key 2, and so on. Reading backwards keeps each key's
 * `empty least/greatest` placement (that relation is the same, only the direction differs).
 * Items equal on every key may come out in another order, which plain `order by` allows; with
 * `stable` and a descending key they would not keep their input order, so that is refused.
 *
 * The rewrite is made on the query text (fontoxpath caches compiled queries by text) and proved:
 * the rewritten text is parsed again and must give the original parse with only the order by
 * clauses split; anything else is refused naming the feature, never run approximately.
 */
import { Document, type Element, serializeToWellFormedString } from 'slimdom';
import type { LibrarianError } from '../../src/errors.ts';
import { masked } from './query-text.ts';
import { refuse } from './unsupported.ts';

const XQX = 'http://www.w3.org/2005/XQueryX';

interface Spec {
  /** The key expression's text. */
  expr: string;
  descending: boolean;
  empty: '' | 'greatest' | 'least';
}

function children(el: Element, localName: string): Element[] {
  return el.children.filter((c) => c.localName === localName);
}

/** The order by clauses with more than one key, in document order. */
function multiKeyClauses(ast: Element): Element[] {
  const out: Element[] = [];
  const walk = (el: Element): void => {
    if (el.localName === 'orderByClause' && children(el, 'orderBySpec').length > 1) out.push(el);
    for (const c of el.children) walk(c);
  };
  walk(ast);
  return out;
}

const CLOSERS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
/** A word that starts the next FLWOR clause (or return) at the clause's own nesting depth (count( is a call). */
const NEXT_CLAUSE = /^(?:return|for|let|where|order|stable|group|count\s+\$)\b/;

/** Splits the text of one order by clause (after `order by`) at its top-level commas; its end. */
export function splitSpecs(code: string, start: number): { parts: [number, number][]; end: number } {
  const parts: [number, number][] = [];
  const stack: string[] = [];
  let from = start;
  let i = start;
  for (; i < code.length; i++) {
    const c = code[i]!;
    if (CLOSERS[c]) stack.push(CLOSERS[c]!);
    else if (c === ')' || c === ']' || c === '}') {
      if (stack.length === 0) break;
      stack.pop();
    } else if (stack.length === 0) {
      if (c === ',') {
        parts.push([from, i]);
        from = i + 1;
      } else if (/\s/.test(code[i - 1] ?? ' ') && NEXT_CLAUSE.test(code.slice(i, i + 8))) break;
    }
  }
  parts.push([from, i]);
  return { parts, end: i };
}

const MODIFIERS = /\s+(ascending|descending)?\s*(?:empty\s+(greatest|least))?\s*$/;

function parseSpec(query: string, code: string, [from, to]: [number, number]): Spec | null {
  const text = code.slice(from, to);
  if (/\bcollation\b/.test(text)) return null;
  const m = MODIFIERS.exec(text);
  const cut = m ? m.index : text.length;
  return {
    expr: query.slice(from, from + cut).trim(),
    descending: m?.[1] === 'descending',
    empty: (m?.[2] as Spec['empty'] | undefined) ?? '',
  };
}

/** Keys 1..n to clauses run n..1, with the directions that leave the lexicographic order. */
function clausesFor(specs: Spec[]): Spec[] {
  const out: Spec[] = [];
  let flipped = false;
  for (const spec of specs) {
    const descending = spec.descending !== flipped;
    out.push({ ...spec, descending });
    if (descending) flipped = !flipped;
  }
  return out.reverse();
}

function clauseText(stable: boolean, s: Spec): string {
  return `${stable ? 'stable ' : ''}order by ${s.expr}${s.descending ? ' descending' : ''}${s.empty ? ` empty ${s.empty}` : ''}`;
}

function reject(reason: string): LibrarianError {
  return refuse('order by with more than one key', reason);
}

/**
 * The query with its multi-key order by clauses split, or null when it has none. Throws
 * librarian.unsupported when the rewrite cannot be proved to mean the same.
 */
export function rewriteOrderBy(query: string, ast: Element, parse: (q: string) => Element): string | null {
  const clauses = multiKeyClauses(ast);
  if (clauses.length === 0) return null;
  const code = masked(query);
  const starts = [...code.matchAll(/\b(stable\s+)?order\s+by\b/g)];
  let out = '';
  let last = 0;
  const expected = ast.cloneNode(true) as Element;
  const expectedClauses = multiKeyClauses(expected);
  for (const match of starts) {
    const begin = match.index + match[0].length;
    const { parts, end } = splitSpecs(code, begin);
    if (parts.length < 2) continue;
    const stable = Boolean(match[1]);
    const specs = parts.map((p) => parseSpec(query, code, p));
    if (specs.some((s) => s === null)) throw reject('a collation on a key');
    if (stable && specs.some((s) => s!.descending)) throw reject('stable with a descending key');
    const split = clausesFor(specs as Spec[]);
    out += `${query.slice(last, match.index)}${split.map((s) => clauseText(stable, s)).join(' ')} `;
    last = end;
    const original = expectedClauses.shift();
    if (!original) throw reject('the clause could not be read');
    splitClause(original, split.length, stable, split);
  }
  if (expectedClauses.length > 0) throw reject('the clause could not be read');
  out += query.slice(last);
  let rewritten: Element;
  try {
    rewritten = parse(out);
  } catch {
    throw reject('the clause could not be read');
  }
  if (canonical(rewritten) !== canonical(expected)) throw reject('the clause could not be read');
  return out;
}

/**
 * In the expected parse: the clause's specs (in key order) become one clause per key, in the
 * order the rewrite runs them, with the directions it gives them.
 */
function splitClause(clause: Element, n: number, stable: boolean, split: Spec[]): void {
  const specs = children(clause, 'orderBySpec');
  const doc = clause.ownerDocument ?? new Document();
  const parent = clause.parentNode!;
  for (let i = 0; i < n; i++) {
    const spec = specs[n - 1 - i]!;
    const single = doc.createElementNS(XQX, 'xqx:orderByClause');
    if (stable) single.appendChild(doc.createElementNS(XQX, 'xqx:stable'));
    const copy = spec.cloneNode(true) as Element;
    for (const m of children(copy, 'orderModifier')) copy.removeChild(m);
    const marker = doc.createElementNS(XQX, 'xqx:direction');
    marker.appendChild(doc.createTextNode(split[i]!.descending ? 'descending' : 'ascending'));
    copy.appendChild(marker);
    const empty = children(spec, 'orderModifier')[0]?.getElementsByTagNameNS(XQX, 'emptyOrderingMode')[0];
    if (empty) copy.appendChild(empty.cloneNode(true));
    single.appendChild(copy);
    parent.insertBefore(single, clause);
  }
  parent.removeChild(clause);
}

/** The parse as text, comments (the query text) left out and each key's direction made explicit. */
export function canonical(ast: Element): string {
  const copy = ast.cloneNode(true) as Element;
  const strip = (el: Element): void => {
    for (const n of [...el.childNodes]) if (n.nodeType === 8) el.removeChild(n);
    if (el.localName === 'orderBySpec' && !children(el, 'direction')[0]) {
      const modifier = children(el, 'orderModifier')[0];
      const kind = modifier?.getElementsByTagNameNS(XQX, 'orderingKind')[0]?.textContent ?? 'ascending';
      const empty = modifier?.getElementsByTagNameNS(XQX, 'emptyOrderingMode')[0];
      if (modifier) el.removeChild(modifier);
      const doc = el.ownerDocument!;
      const marker = doc.createElementNS(XQX, 'xqx:direction');
      marker.appendChild(doc.createTextNode(kind));
      el.appendChild(marker);
      if (empty) el.appendChild(empty);
    }
    for (const c of el.children) strip(c);
  };
  strip(copy);
  // Types and resolved URIs are annotations fontoxpath adds in some contexts and not others; the
  // names' prefixes, which they are derived from, stay compared.
  return serializeToWellFormedString(copy).replace(/ xqx:(?:type|URI)="[^"]*"/g, '');
}
