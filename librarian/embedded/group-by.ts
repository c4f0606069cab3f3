/**
 * The `group by` clause (XQuery 3.1 3.12.7), which fontoxpath parses but does not run ("groupByClause
 * is not implemented yet"), rewritten into clauses it runs. For a FLWOR
 *
 *   PRE group by $k1 := E1, $k2 POST        (PRE: the clauses before, POST: those after and return)
 *
 * the rewrite is
 *
 *   let $t := (PRE let $k1 := E1 return [key($k1), key($k2), $v1, $v2 ...])   (: the tuple stream :)
 *   let $s := for $x in $t return sig($x(1)) || '|' || sig($x(2))
 *   for $g in distinct-values($s)                                (: one tuple per group, in order :)
 *   let $m := for $p in index-of($s, $g) return $t[$p]
 *   let $k1 := $m[1](1) let $k2 := $m[1](2)
 *   let $v1 := for $x in $m return $x(3) ...                     (: each other variable: its values
 *   POST                                                            over the group, in order :)
 *
 * Why it means the same: `$k := E` is a let clause before the grouping (as the spec defines it, so
 * `group by $y, $y := E` has two keys of E's value); a grouping key is atomized, must be at most one item (XPTY0004), and
 * xs:untypedAtomic is cast to xs:string (key()); two tuples share a group when each key pair is
 * both empty or deep-equal (values eq, NaN equal to NaN, values of types eq cannot compare are
 * different). sig() writes a key as a string that is equal for two keys exactly then: a type family
 * letter (numbers, strings and URIs, booleans, date/times; all numbers compared as doubles, as
 * fontoxpath computes them, +0e0 so -0 is 0; date/times as their distance from the epoch, which
 * is what eq compares, the implicit timezone filling a missing one) and, for strings, a length
 * before the text, so the joined signature cannot be read two ways. A key of another type
 * (duration, QName, binary, gYear...) raises organism:unsupported-group-key. The variables of PRE
 * that are not grouping variables are bound to the concatenation of their values over the group,
 * in tuple order; the groups come in the order of their first tuple (the spec leaves it open).
 * A collation on a key or a type on a grouping variable is refused.
 *
 * The rewrite is made on the text (the FLWOR's span from fontoxpath's positions) and proved as the
 * others are (graft.ts): the rewritten text must parse to the original parse with this FLWOR
 * replaced by the template whose holes hold the original's parsed clauses and key expressions.
 */
import type { Element } from 'slimdom';
import { LibrarianError } from '../../src/errors.ts';
import {
  boundVariables,
  flworSpan,
  flwors,
  graftClauses,
  innermost,
  provedRewrite,
  varName,
} from './flwor.ts';
import { bodyExpression, childNamed, hole, holes, replaceWith } from './graft.ts';
import { splitSpecs } from './order-by.ts';
import { masked } from './query-text.ts';
import { refuse } from './unsupported.ts';

const MAX_CLAUSES = 16;

function reject(reason: string): LibrarianError {
  return refuse('group by clause', reason);
}

const ERR = 'http://www.w3.org/2005/xqt-errors';
const A = '$organism_ga_';

/** A grouping key's value: atomized, at most one item, untypedAtomic as string. */
function key(expr: string): string {
  return (
    `(let ${A} := data((${expr})) return if (count(${A}) gt 1) then error(QName('${ERR}', 'XPTY0004'), ` +
    `'a grouping key is a sequence of more than one item') else if (${A} instance of xs:untypedAtomic) ` +
    `then string(${A}) else ${A})`
  );
}

/** A key value as a string equal for two keys exactly when they fall in one group. */
function signature(value: string): string {
  return (
    `(let ${A} := ${value} return if (empty(${A})) then 'e' ` +
    `else if (${A} instance of xs:decimal or ${A} instance of xs:double or ${A} instance of xs:float) then 'n' || string(xs:double(${A}) + 0e0) ` +
    `else if (${A} instance of xs:string or ${A} instance of xs:anyURI) then 's' || string-length(${A}) || ':' || ${A} ` +
    `else if (${A} instance of xs:boolean) then 'b' || string(${A}) ` +
    `else if (${A} instance of xs:dateTime) then 'T' || string(${A} - xs:dateTime('1970-01-01T00:00:00Z')) ` +
    `else if (${A} instance of xs:date) then 'D' || string(${A} - xs:date('1970-01-01Z')) ` +
    `else if (${A} instance of xs:time) then 'H' || string(${A} - xs:time('00:00:00Z')) ` +
    `else error(QName('urn:organism', 'unsupported-group-key'), 'unsupported: group by clause with a key of this type'))`
  );
}

interface Pieces {
  /** Makes the rewrite's own variable names unlike any in the query. */
  id: number;
  pre: string;
  /** Each grouping variable and, for `$k := E`, E's text (a let clause before grouping, as the spec defines it). */
  keys: { name: string; expr: string | null }[];
  carried: string[];
  post: string;
}

function template(p: Pieces): string {
  const n = p.keys.length;
  const lets = p.keys.map((k) => (k.expr === null ? '' : ` let ${k.name} := ${k.expr}`)).join('');
  const members = [...p.keys.map((k) => key(k.name)), ...p.carried].join(', ');
  const sigs = p.keys.map((_, i) => signature(`$organism_g${p.id}x_(${i + 1})`)).join(` || '|' || `);
  return (
    `let $organism_g${p.id}t_ := (${p.pre}${lets} return [${members}]) ` +
    `let $organism_g${p.id}s_ := for $organism_g${p.id}x_ in $organism_g${p.id}t_ return ${sigs} ` +
    `for $organism_g${p.id}k_ in distinct-values($organism_g${p.id}s_) ` +
    `let $organism_g${p.id}g_ := for $organism_g${p.id}p_ in index-of($organism_g${p.id}s_, $organism_g${p.id}k_) return $organism_g${p.id}t_[$organism_g${p.id}p_] ` +
    p.keys.map((k, i) => `let ${k.name} := $organism_g${p.id}g_[1](${i + 1}) `).join('') +
    p.carried
      .map(
        (v, i) =>
          `let ${v} := for $organism_g${p.id}x_ in $organism_g${p.id}g_ return $organism_g${p.id}x_(${n + i + 1}) `,
      )
      .join('') +
    p.post
  );
}

/** The FLWOR's text span and where its group by clause is. */
function locate(query: string, index: number) {
  const { start, end } = flworSpan(query, index, reject);
  const code = masked(query);
  let depth = 0;
  for (let i = start; i < end; i++) {
    const c = code[i]!;
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && c === 'g' && !/[\w$:.-]/.test(code[i - 1] ?? ' ')) {
      const m = /^group\s+by\b/.exec(code.slice(i, i + 40));
      if (m) {
        const { parts, end: specsEnd } = splitSpecs(code, i + m[0].length);
        return { start, end, group: i, specsEnd, parts };
      }
    }
  }
  throw reject('the clause could not be read');
}

const SPEC = /^(\$[\w.-]+(?::[\w.-]+)?)\s*(?::=([\s\S]*))?$/;

/** One group by clause rewritten: the new text, proved. */
function rewriteOne(query: string, ast: Element, index: number, parse: (q: string) => Element): string {
  const flwor = flwors(ast)[index]!;
  const clauses = [...flwor.children];
  const at = clauses.findIndex((c) => c.localName === 'groupByClause');
  const specs = clauses[at]!.children.filter((c) => c.localName === 'groupingSpec');
  const { start, end, group, specsEnd, parts } = locate(query, index);
  if (parts.length !== specs.length) throw reject('the clause could not be read');
  const bound = boundVariables(clauses.slice(0, at), reject);
  const initialized = specs
    .filter((spec) => childNamed(spec, 'groupVarInitialize'))
    .map((spec) => varName(childNamed(spec, 'varName'), reject));
  const keys = specs.map((spec, i) => {
    if (childNamed(spec, 'collation')) throw reject('a collation on a key');
    if (childNamed(spec, 'typeDeclaration')) throw reject('a type on a grouping variable');
    const name = varName(childNamed(spec, 'varName'), reject);
    const written = query.slice(parts[i]![0], parts[i]![1]).trim();
    if (/^\$\S+\s+as\b/.test(written)) throw reject('a type on a grouping variable');
    const m = SPEC.exec(written);
    if (!m || m[1] !== name || Boolean(m[2]) !== Boolean(childNamed(spec, 'groupVarInitialize')))
      throw reject('the clause could not be read');
    if (!m[2] && !bound.includes(name) && !initialized.includes(name)) {
      throw new LibrarianError(
        'librarian.query',
        `XQuery error: XQST0094: the grouping variable ${name} is not bound by a clause before group by`,
        { xquery_code: 'XQST0094' },
      );
    }
    return { name, expr: m[2] ?? null };
  });
  const names = keys.map((k) => k.name);
  // The variables of an earlier rewrite's own clauses are not used after them.
  const carried = bound.filter((v) => !names.includes(v) && !/^\$organism_[gc]\d+[a-z]_$/.test(v));
  let id = 0;
  while (query.includes(`organism_g${id}`)) id++;
  const text = template({
    id,
    pre: query.slice(start, group),
    keys,
    carried,
    post: query.slice(specsEnd, end),
  });
  const rewritten = `${query.slice(0, start)}${text}${query.slice(end)}`;

  // The expected parse: the template with the original's parsed pieces in its holes.
  const holed = bodyExpression(
    parse(
      template({
        id,
        pre: `for $organism_gh_ in ${hole('pre')}`,
        keys: keys.map((k, i) => ({
          name: k.name,
          expr: specs[i]!.getElementsByTagNameNS(flwor.namespaceURI, 'groupVarInitialize')[0]
            ? hole(`k${i}`)
            : k.expr,
        })),
        carried,
        post: ` where ${hole('post')} return ()`,
      }),
    ),
  );
  const found = holes(holed);
  specs.forEach((spec, i) => {
    const value = spec.getElementsByTagNameNS(flwor.namespaceURI, 'varValue')[0];
    if (value) replaceWith(found.get(`k${i}`)!, [...value.children]);
  });
  graftClauses(holed, found, clauses.slice(0, at), clauses.slice(at + 1), reject);
  return provedRewrite(ast, index, holed, rewritten, parse, reject);
}

/**
 * The query with its group by clauses rewritten (innermost first), or null when it has none.
 * Throws librarian.unsupported naming group by when a rewrite cannot be proved.
 */
export function rewriteGroupBy(query: string, ast: Element, parse: (q: string) => Element): string | null {
  let text = query;
  let current = ast;
  for (let n = 0; n < MAX_CLAUSES; n++) {
    const index = innermost(current, (c) => c.localName === 'groupByClause');
    if (index < 0) return n === 0 ? null : text;
    text = rewriteOne(text, current, index, parse);
    current = parse(text);
  }
  throw reject('too many group by clauses');
}
