/**
 * Reading a FLWOR for the clause rewrites (group-by.ts, count.ts): where it is in the text (from
 * fontoxpath's debug positions), the variables its clauses bind, and the expected parse of a
 * template whose `pre` and `post` holes stand for the original's clauses.
 */
import fontoxpath from 'fontoxpath';
import { Document, type Element } from 'slimdom';
import type { LibrarianError } from '../../src/errors.ts';
import { childNamed, type holes, replaceWith } from './graft.ts';
import { canonical } from './order-by.ts';

const FONTO = 'http://fontoxml.com/fontoxpath';

export type Fail = (reason: string) => LibrarianError;

export function parseDebug(query: string): Element {
  return fontoxpath.parseScript(
    query,
    { language: fontoxpath.evaluateXPath.XQUERY_3_1_LANGUAGE, debug: true },
    new Document() as never,
  ) as unknown as Element;
}

export function flwors(ast: Element): Element[] {
  return [...ast.getElementsByTagNameNS(ast.namespaceURI, 'flworExpr')];
}

/** The last FLWOR (so one with none of its kind inside) with a clause `has` accepts, or -1. */
export function innermost(ast: Element, has: (clause: Element) => boolean): number {
  const all = flwors(ast);
  for (let i = all.length - 1; i >= 0; i--) if (all[i]!.children.some(has)) return i;
  return -1;
}

function offset(el: Element, which: 'start' | 'end', fail: Fail): number {
  const raw = el.getAttributeNS(FONTO, which);
  if (!raw) throw fail('its place in the query could not be read');
  return (JSON.parse(raw) as { offset: number }).offset;
}

/** The text span of the index-th FLWOR, from fontoxpath's own positions. */
export function flworSpan(query: string, index: number, fail: Fail): { start: number; end: number } {
  const trace = flwors(parseDebug(query))[index]?.parentElement;
  if (!trace || trace.namespaceURI !== FONTO) throw fail('its place in the query could not be read');
  return { start: offset(trace, 'start', fail), end: offset(trace, 'end', fail) };
}

export function varName(el: Element | undefined, fail: Fail): string {
  if (!el) throw fail('a variable could not be read');
  const prefix = el.getAttributeNS(el.namespaceURI, 'prefix') ?? el.getAttribute('prefix') ?? '';
  const uri = el.getAttributeNS(el.namespaceURI, 'URI') ?? el.getAttribute('URI');
  if (uri && !prefix) throw fail('a variable named by URI');
  return `$${prefix ? `${prefix}:` : ''}${el.textContent}`;
}

/** The variables the clauses bind, in order, each once. */
export function boundVariables(clauses: Element[], fail: Fail): string[] {
  const out: string[] = [];
  const add = (name: string) => {
    if (!out.includes(name)) out.push(name);
  };
  for (const clause of clauses) {
    if (clause.localName === 'forClause' || clause.localName === 'letClause') {
      for (const item of clause.children) {
        add(varName(childNamed(childNamed(item, 'typedVariableBinding')!, 'varName'), fail));
        const at = childNamed(item, 'positionalVariableBinding');
        if (at) add(varName(at, fail));
      }
    } else if (clause.localName !== 'whereClause' && clause.localName !== 'orderByClause') {
      throw fail(`a ${clause.localName} before it`);
    }
  }
  return out;
}

/**
 * A template FLWOR made the expected one: the FLWOR holding the `pre` hole gets the original
 * clauses before the rewritten one in place of its first clause; the template's last two clauses
 * (`where <post> return ()`) become the original clauses after it.
 */
export function graftClauses(
  holed: Element,
  found: ReturnType<typeof holes>,
  pre: Element[],
  post: Element[],
  fail: Fail,
): void {
  let inner: Element | null = found.get('pre') ?? null;
  while (inner && inner.localName !== 'flworExpr') inner = inner.parentElement;
  if (!inner || !found.get('post')) throw fail('the clause could not be read');
  const doc = holed.ownerDocument!;
  const first = inner.children[0]!;
  for (const clause of pre) inner.insertBefore(doc.importNode(clause, true), first);
  inner.removeChild(first);
  const tail = [...holed.children].slice(-2);
  for (const clause of post) holed.appendChild(doc.importNode(clause, true));
  for (const t of tail) holed.removeChild(t);
}

/**
 * The proof of a FLWOR rewrite (group-by.ts, count.ts): `rewritten`, parsed again, must be the
 * original parse `ast` with its `index`-th FLWOR replaced by `holed`, the rewrite's template with
 * the original's own clauses grafted into its holes. Returns `rewritten`, or throws `fail`.
 */
export function provedRewrite(
  ast: Element,
  index: number,
  holed: Element,
  rewritten: string,
  parse: (q: string) => Element,
  fail: Fail,
): string {
  const expected = ast.cloneNode(true) as Element;
  replaceWith(flwors(expected)[index]!, [holed]);
  let got: string;
  try {
    got = canonical(parse(rewritten));
  } catch {
    throw fail('the clause could not be read');
  }
  if (got !== canonical(expected)) throw fail('the clause could not be read');
  return rewritten;
}
