/**
 * The query as the embedded engine runs it: what fontoxpath cannot parse made parseable (count
 * clauses, string constructors with space around an interpolation), the features it lacks
 * rewritten into ones it runs (string constructors, fn:sort#1, order by with several keys, group
 * by, count, map constructors with computed keys checked for duplicates, typed for, let,
 * some/every and prolog variables checked), each rewrite proved against fontoxpath's own parse,
 * and what it would answer wrong refused by name (unsupported.ts) before anything runs.
 */
import type { Element } from 'slimdom';
import { markerCalls, rewriteCount, substituteCountClauses } from './count.ts';
import { rewriteGroupBy } from './group-by.ts';
import { rewriteMapKeys } from './map-keys.ts';
import { rewriteOrderBy } from './order-by.ts';
import { rewriteSort } from './sort.ts';
import { proveStringConstructors, scanStringConstructors } from './string-constructor.ts';
import { rewriteTypedBindings } from './typed-binding.ts';
import { checkSupported } from './unsupported.ts';

type Parse = (query: string) => Element;

interface Parseable {
  /** The text parsed (for a syntax error's line and column). */
  source: string;
  ast: Element;
  /** The query with its count clauses substituted, and how many. */
  counted: { text: string; count: number };
  constructors: ReturnType<typeof scanStringConstructors>;
}

function parseable(query: string, parse: Parse, substitute: boolean): Parseable {
  const counted = substitute ? substituteCountClauses(query) : { text: query, count: 0 };
  const constructors = scanStringConstructors(counted.text);
  const source = constructors?.normalized ?? counted.text;
  return { source, ast: parse(source), counted, constructors };
}

/**
 * The text to run. Throws the refusal, or the parse error with `source` (the text it was found
 * in) set on the thrown value's `parsed` property.
 */
export function rewriteQuery(query: string, parse: Parse): string {
  let p: Parseable;
  try {
    p = parseable(query, parse, true);
  } catch (error) {
    // `count $x` in element content is text: substituted, it no longer parses.
    const counted = substituteCountClauses(query);
    if (counted.count === 0) throw withSource(error, scanned(query));
    try {
      p = parseable(query, parse, false);
    } catch {
      throw withSource(error, scanned(counted.text));
    }
  }
  // `count $x` inside a string constructor's text is text too: substituted, it is not a clause.
  if (p.counted.count > 0 && markerCalls(p.ast) !== p.counted.count) {
    try {
      p = parseable(query, parse, false);
    } catch {
      // Then it is refused naming the count clause below, not run as substituted.
    }
  }
  let { ast } = p;
  let text = p.counted.text;
  if (p.constructors) {
    text = proveStringConstructors(p.constructors, ast, parse);
    ast = parse(text);
  }
  for (const rewrite of [rewriteTypedBindings, rewriteSort, rewriteOrderBy]) {
    const rewritten = rewrite(text, ast, parse);
    if (rewritten !== null) {
      text = rewritten;
      ast = parse(text);
    }
  }
  checkSupported(ast);
  // After the check: what these write is their own, proved in map-keys.ts, group-by.ts, count.ts.
  const checkedMaps = rewriteMapKeys(text, ast, parse);
  if (checkedMaps !== null) {
    text = checkedMaps;
    ast = parse(text);
  }
  const grouped = rewriteGroupBy(text, ast, parse);
  if (grouped !== null) text = grouped;
  if (p.counted.count === 0) return text;
  return rewriteCount(text, grouped === null ? ast : parse(text), parse, p.counted.count);
}

function scanned(text: string): string {
  return scanStringConstructors(text)?.normalized ?? text;
}

/** A parse error carrying the text it was found in. */
export class ParseFailure extends Error {
  constructor(
    readonly error: unknown,
    readonly source: string,
  ) {
    super(error instanceof Error ? error.message : String(error));
  }
}

function withSource(error: unknown, source: string): ParseFailure {
  return new ParseFailure(error, source);
}
