/**
 * fn:sort#1, which fontoxpath lacks, rewritten into the FLWOR that means the same:
 *
 *   sort(X)   ->   (for $organism_sort_ in X order by $organism_sort_ empty least return $organism_sort_)
 *
 * fn:sort#1 orders the items by their atomized values, untypedAtomic as strings, NaN first, keeping
 * the order of equal items (F&O 3.1 18.2.8); an order by clause on the item does the same, and
 * fontoxpath's ascending order by is a stable sort. Items whose value is more than one atomic value
 * (a key fn:sort compares as a sequence) fail with XPTY0004 instead: an error, not another order.
 * As in order-by.ts the rewrite is proved: the new text is parsed and must equal the original
 * parse with each call replaced by that FLWOR, else the query is refused naming fn:sort().
 */
import { Document, type Element } from 'slimdom';
import { canonical } from './order-by.ts';
import { masked } from './query-text.ts';
import { refuse } from './unsupported.ts';

const FN = 'http://www.w3.org/2005/xpath-functions';
const V = '$organism_sort_';
const FLWOR = (arg: string) => `(for ${V} in ${arg} order by ${V} empty least return ${V})`;

/** fontoxpath's parse names the URI only in some places; unprefixed means fn unless declared otherwise. */
function isSort1(el: Element, defaultFn: boolean): boolean {
  if (el.localName !== 'functionCallExpr') return false;
  const name = el.children.find((c) => c.localName === 'functionName');
  const uri = name?.getAttributeNS(name.namespaceURI, 'URI') ?? name?.getAttribute('URI');
  const prefix = name?.getAttributeNS(name.namespaceURI, 'prefix') ?? name?.getAttribute('prefix') ?? '';
  const fn = uri === FN || (!uri && (prefix === 'fn' || (prefix === '' && defaultFn)));
  const args = el.children.find((c) => c.localName === 'arguments');
  return name?.textContent === 'sort' && fn && args?.children.length === 1;
}

function sortCalls(ast: Element): Element[] {
  const out: Element[] = [];
  const defaultFn = ast.getElementsByTagNameNS(ast.namespaceURI, 'defaultNamespaceDecl').length === 0;
  const walk = (el: Element): void => {
    if (isSort1(el, defaultFn)) out.push(el);
    for (const c of el.children) walk(c);
  };
  walk(ast);
  return out;
}

/** The last `sort(` / `fn:sort(` call with one argument in the text: [start, argument start, close]. */
function lastCall(text: string): [number, number, number] | null {
  const code = masked(text);
  const starts = [...code.matchAll(/(?<![\w.:$-])(?:fn:)?sort\s*\(/g)];
  for (let m = starts.length - 1; m >= 0; m--) {
    const start = starts[m]!.index;
    const open = start + starts[m]![0].length;
    let depth = 0;
    let commas = 0;
    for (let i = open; i < code.length; i++) {
      const c = code[i]!;
      if (c === '(' || c === '[' || c === '{') depth++;
      else if (c === ')' || c === ']' || c === '}') {
        if (depth === 0) {
          if (commas === 0 && code.slice(open, i).trim() !== '') return [start, open, i];
          break;
        }
        depth--;
      } else if (c === ',' && depth === 0) commas++;
    }
  }
  return null;
}

/** The query with its fn:sort#1 calls rewritten, or null when it has none; throws when unproved. */
export function rewriteSort(query: string, ast: Element, parse: (q: string) => Element): string | null {
  const calls = sortCalls(ast);
  if (calls.length === 0) return null;
  const cannot = () => refuse('fn:sort()', 'the call could not be rewritten as an order by');
  let text = query;
  for (let n = 0; n < calls.length; n++) {
    const call = lastCall(text);
    if (!call) throw cannot();
    const [start, open, close] = call;
    text = `${text.slice(0, start)}${FLWOR(text.slice(open, close))}${text.slice(close + 1)}`;
  }
  const expected = ast.cloneNode(true) as Element;
  const template = parse(FLWOR('()'));
  const flwor = template.getElementsByTagNameNS(template.namespaceURI, 'flworExpr')[0]!;
  for (const el of sortCalls(expected).reverse()) {
    const copy = (el.ownerDocument ?? new Document()).importNode(flwor, true) as Element;
    const forExpr = copy.getElementsByTagNameNS(copy.namespaceURI, 'forExpr')[0]!;
    while (forExpr.firstChild) forExpr.removeChild(forExpr.firstChild);
    const arg = el.children.find((c) => c.localName === 'arguments')!.children[0]!;
    forExpr.appendChild(arg);
    // As a step (sort(X) ! f, sort(X)[1]) the parenthesized FLWOR is parsed inside a sequenceExpr.
    let replacement = copy;
    if ((el.parentNode as Element).localName === 'filterExpr') {
      replacement = (el.ownerDocument ?? new Document()).createElementNS(
        copy.namespaceURI,
        'xqx:sequenceExpr',
      );
      replacement.appendChild(copy);
    }
    el.parentNode!.replaceChild(replacement, el);
  }
  let rewritten: Element;
  try {
    rewritten = parse(text);
  } catch {
    throw cannot();
  }
  if (canonical(rewritten) !== canonical(expected)) throw cannot();
  return text;
}
