/**
 * String constructors (XQuery 3.1 3.10.2), which fontoxpath parses but does not run ("No selector
 * counterpart for: stringConstructor"), and whose parser takes no whitespace or comment inside
 * `{ }`: rewritten into the expression the spec defines them as,
 *
 *   ``[Dear `{ $c/name }`,]``   ->   string-join(("Dear ", string-join(for $v in data(($c/name)) return string($v), ' '), ","), '')
 *
 * The constructor's value is its literal characters and its interpolations, concatenated; each
 * interpolation's value is its expression atomized, each value cast to xs:string, joined with
 * single spaces. Proved as the other rewrites are (graft.ts): the query with each interpolation's
 * expression trimmed must parse, and the rewritten text must parse to that parse with each
 * stringConstructor replaced by the template above holding the parsed characters and expressions.
 */
import type { Element } from 'slimdom';
import { bodyExpression, hole, holes, replaceWith } from './graft.ts';
import { canonical } from './order-by.ts';
import { refuse } from './unsupported.ts';

const V = '$organism_sc_';

function literal(chars: string): string {
  return `"${chars.replace(/&/g, '&amp;').replace(/"/g, '""')}"`;
}

function interpolation(expr: string): string {
  return `string-join(for ${V} in data((${expr})) return string(${V}), ' ')`;
}

function joined(parts: string[]): string {
  return `string-join((${parts.join(', ')}), '')`;
}

interface Scan {
  /** The text with each string constructor rewritten. */
  out: string;
  /** The text with each interpolation's expression trimmed (what fontoxpath's parser takes). */
  norm: string;
  end: number;
  found: number;
}

/** Reads code from `start`; inside an interpolation, up to the `}` closing it. Null: not readable. */
function scanCode(q: string, start: number, inInterpolation: boolean): Scan | null {
  let out = '';
  let norm = '';
  let found = 0;
  let depth = 0;
  let i = start;
  while (i < q.length) {
    const c = q[i]!;
    if (q.startsWith('(:', i)) {
      let level = 0;
      let j = i;
      for (; j < q.length; j++) {
        if (q.startsWith('(:', j)) {
          level++;
          j++;
        } else if (q.startsWith(':)', j)) {
          level--;
          j++;
          if (level === 0) break;
        }
      }
      if (level !== 0) return null;
      out += q.slice(i, j + 1);
      norm += inInterpolation ? ' ' : q.slice(i, j + 1);
      i = j + 1;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      for (; j < q.length; j++) {
        if (q[j] === c && q[j + 1] === c) j++;
        else if (q[j] === c) break;
      }
      if (j >= q.length) return null;
      out += q.slice(i, j + 1);
      norm += q.slice(i, j + 1);
      i = j + 1;
    } else if (q.startsWith('``[', i)) {
      const sc = scanConstructor(q, i);
      if (!sc) return null;
      out += sc.out;
      norm += sc.norm;
      found += sc.found;
      i = sc.end;
    } else {
      if (inInterpolation && c === '{') depth++;
      else if (inInterpolation && c === '}') {
        if (depth === 0) return { out, norm, end: i, found };
        depth--;
      }
      out += c;
      norm += c;
      i++;
    }
  }
  return inInterpolation ? null : { out, norm, end: i, found };
}

function scanConstructor(q: string, start: number): Scan | null {
  const parts: string[] = [];
  let chars = '';
  let norm = '``[';
  let found = 1;
  let j = start + 3;
  while (!q.startsWith(']``', j)) {
    if (j >= q.length) return null;
    if (q.startsWith('`{', j)) {
      if (chars) parts.push(literal(chars));
      chars = '';
      const inner = scanCode(q, j + 2, true);
      if (!inner || !q.startsWith('}`', inner.end)) return null;
      const expr = inner.out.trim() === '' ? '()' : inner.out;
      parts.push(interpolation(expr));
      norm += `\`{${inner.norm.trim() || '()'}}\``;
      found += inner.found;
      j = inner.end + 2;
    } else {
      chars += q[j];
      norm += q[j];
      j++;
    }
  }
  if (chars) parts.push(literal(chars));
  return { out: joined(parts), norm: `${norm}]\`\``, end: j + 3, found };
}

/** The query read for string constructors: null when it has none (or cannot be read: left to the parser). */
export function scanStringConstructors(query: string): { normalized: string; rewritten: string } | null {
  if (!query.includes('``[')) return null;
  const scan = scanCode(query, 0, false);
  if (!scan || scan.found === 0) return null;
  return { normalized: scan.norm, rewritten: scan.out };
}

/** The expected parse: each stringConstructor of `ast` (innermost first) as its template, grafted. */
function expected(ast: Element, parse: (q: string) => Element): Element {
  const copy = ast.cloneNode(true) as Element;
  const constructors = [...copy.getElementsByTagNameNS(copy.namespaceURI, 'stringConstructor')].reverse();
  for (const sc of constructors) {
    const parts: string[] = [];
    const exprs: Element[][] = [];
    for (const part of sc.children) {
      if (part.localName === 'stringConstructorChars') {
        if (part.textContent) parts.push(literal(part.textContent));
      } else if (part.localName === 'stringConstructorInterpolation') {
        parts.push(interpolation(hole(`i${exprs.length}`)));
        exprs.push([...part.children]);
      } else throw new Error(`unexpected ${part.localName}`);
    }
    const template = bodyExpression(parse(joined(parts)));
    const found = holes(template);
    for (const [n, pieces] of exprs.entries()) replaceWith(found.get(`i${n}`)!, pieces);
    replaceWith(sc, [template]);
  }
  return copy;
}

/**
 * The rewritten text, once proved: `ast` is the parse of the normalized text. Throws
 * librarian.unsupported naming string constructors when the two parses differ.
 */
export function proveStringConstructors(
  scan: { rewritten: string },
  ast: Element,
  parse: (q: string) => Element,
): string {
  const reject = () => refuse('string constructor', 'it could not be rewritten into an expression');
  let want: string;
  let got: string;
  try {
    want = canonical(expected(ast, parse));
    got = canonical(parse(scan.rewritten));
  } catch {
    throw reject();
  }
  if (want !== got) throw reject();
  return scan.rewritten;
}
