/**
 * What the embedded engine (fontoxpath) cannot do right, found before a query runs so it is refused
 * naming the feature ("unsupported: group by clause") instead of answered approximately. The
 * differential suite (test/librarian/differential.test.ts) compares every answer with BaseX; each
 * rule here stands for a difference it found:
 *
 * - on the parsed query (XQueryX, fontoxpath's own parser): FLWOR clauses it does not run, functions
 *   it lacks or gets wrong, integers beyond 2^53 (it computes with JS numbers), xs:decimal
 *   arithmetic (computed as binary doubles: 0.1 + 0.2 gives 0.30000000000000004), maps looked up
 *   with a node as the key (not atomized: nothing found), and duplicate literal map keys (an error
 *   in XQuery, accepted by fontoxpath);
 * - on the text, when fontoxpath cannot parse it: syntax it has no parser for (try/catch, the window
 *   clause, declare option), so the agent hears which feature and
 *   not a syntax error in a valid query.
 */
import type { Element } from 'slimdom';
import { LibrarianError } from '../../src/errors.ts';

const FN = 'http://www.w3.org/2005/xpath-functions';
const XS = 'http://www.w3.org/2001/XMLSchema';

/** fn functions by local name: the arities that are missing or wrong, and the feature named. */
const FUNCTIONS: Record<string, { arities: number[] | 'all'; feature: string }> = {
  'format-number': { arities: [3], feature: 'format-number() with a decimal format' },
  'format-date': { arities: 'all', feature: 'format-date()' },
  'format-dateTime': { arities: 'all', feature: 'format-dateTime()' },
  'format-time': { arities: 'all', feature: 'format-time()' },
  'adjust-dateTime-to-timezone': { arities: 'all', feature: 'adjust-dateTime-to-timezone()' },
  'adjust-date-to-timezone': { arities: 'all', feature: 'adjust-date-to-timezone()' },
  'adjust-time-to-timezone': { arities: 'all', feature: 'adjust-time-to-timezone()' },
  'analyze-string': { arities: 'all', feature: 'analyze-string()' },
  'contains-token': { arities: [3], feature: 'contains-token() with a collation' },
  sort: { arities: [2, 3], feature: 'fn:sort() with a collation or key function' },
  serialize: { arities: [2], feature: 'serialize() with options' },
  'json-to-xml': { arities: 'all', feature: 'json-to-xml()' },
  'xml-to-json': { arities: 'all', feature: 'xml-to-json()' },
};

const ARITHMETIC = new Set(['addOp', 'subtractOp', 'multiplyOp', 'divOp', 'modOp', 'unaryMinusOp']);

/** Syntax fontoxpath cannot parse, looked for in the query's code (comments and strings blanked). */
const SYNTAX: [RegExp, string][] = [
  [/\btry\s*\{/, 'try/catch expression'],
  [/\b(?:tumbling|sliding)\s+window\b/, 'window clause'],
  [/\bdeclare\s+option\b/, 'declare option'],
  [/\bdeclare\s+context\s+item\b/, 'declare context item'],
];

export function refuse(feature: string, hint = ''): LibrarianError {
  return new LibrarianError(
    'librarian.unsupported',
    `unsupported: ${feature} (the embedded librarian's XQuery engine cannot do it right, so the query was not run${hint ? `; ${hint}` : ''}). ` +
      'The exist and basex backends run it.',
    { feature },
  );
}

function* descendants(el: Element): Generator<Element> {
  for (const c of el.children) {
    yield c;
    yield* descendants(c);
  }
}

function child(el: Element, localName: string): Element | undefined {
  return el.children.find((c) => c.localName === localName);
}

/** An XQueryX attribute (fontoxpath puts them in the XQueryX namespace). */
function attr(el: Element | undefined, name: string): string | null {
  if (!el) return null;
  return el.getAttributeNS(el.namespaceURI, name) ?? el.getAttribute(name);
}

function isDecimal(el: Element): boolean {
  if (el.localName === 'decimalConstantExpr') return true;
  if ((attr(el, 'type') ?? '').startsWith('xs:decimal')) return true;
  if (el.localName === 'functionCallExpr') {
    const name = child(el, 'functionName');
    return attr(name, 'URI') === XS && name?.textContent === 'decimal';
  }
  return false;
}

function hasDecimal(el: Element): boolean {
  if (isDecimal(el)) return true;
  for (const d of descendants(el)) if (isDecimal(d)) return true;
  return false;
}

const DOUBLE_HINT =
  "it would be written in JavaScript's form (10000000000, 1E-7) instead of XPath's (1.0E10, 1.0E-7); format-integer or round() it first";

function isDouble(el: Element): boolean {
  if (el.localName === 'doubleConstantExpr') return true;
  const type = attr(el, 'type') ?? '';
  if (type.startsWith('xs:double') || type.startsWith('xs:float')) return true;
  if (el.localName === 'functionCallExpr') {
    const name = child(el, 'functionName');
    const xs = attr(name, 'URI') === XS || attr(name, 'prefix') === 'xs';
    return xs && (name?.textContent === 'double' || name?.textContent === 'float');
  }
  return false;
}

function hasDouble(el: Element): boolean {
  for (const d of descendants(el)) if (isDouble(d)) return true;
  return false;
}

/** fn:string, xs:string, concat and string-join: where a double becomes its string form. */
function isStringConversion(name: Element | undefined): boolean {
  const local = name?.textContent ?? '';
  const uri = attr(name, 'URI');
  if (uri === XS || attr(name, 'prefix') === 'xs') return local === 'string';
  return (uri ?? FN) === FN && ['string', 'concat', 'string-join'].includes(local);
}

function castsToString(cast: Element): boolean {
  const type = child(child(cast, 'singleType') ?? cast, 'atomicType');
  return type?.textContent === 'string';
}

/** A key expression that gives nodes: a path (attribute, element) not atomized first. */
function isNodeKey(el: Element | undefined): boolean {
  return el?.localName === 'pathExpr';
}

/** Throws librarian.unsupported (or the XQuery error) for what the engine would get wrong. */
export function checkSupported(ast: Element): void {
  for (const el of descendants(ast)) {
    switch (el.localName) {
      case 'stringConstructor':
        throw refuse('string constructor');
      case 'orderByClause':
        // fontoxpath reads a descending key's ascending sort backwards, so equal keys come out in
        // reverse input order, which stable forbids (measured: stable order by $x mod 1 descending
        // over (1, 2, 3) gave 3, 2, 1).
        if (
          child(el, 'stable') &&
          [...descendants(el)].some((d) => d.localName === 'orderingKind' && d.textContent === 'descending')
        )
          throw refuse('stable order by with a descending key', 'equal keys would come out in reverse order');
        if (el.children.filter((c) => c.localName === 'orderBySpec').length > 1)
          throw refuse('order by with more than one key', 'sort by one key, or by a key combining them');
        break;
      case 'integerConstantExpr': {
        const value = child(el, 'value')?.textContent ?? '0';
        if (Number(value) > Number.MAX_SAFE_INTEGER) throw refuse('integers above 2^53');
        break;
      }
      case 'functionCallExpr': {
        const name = child(el, 'functionName');
        const uri = attr(name, 'URI') ?? (attr(name, 'prefix') ? null : FN);
        const rule = uri === FN ? FUNCTIONS[name?.textContent ?? ''] : undefined;
        const arity = child(el, 'arguments')?.children.length ?? 0;
        if (rule && (rule.arities === 'all' || rule.arities.includes(arity))) throw refuse(rule.feature);
        if (isStringConversion(name) && hasDouble(el))
          throw refuse('a double turned into a string', DOUBLE_HINT);
        if (uri === FN && (name?.textContent === 'sum' || name?.textContent === 'avg') && hasDecimal(el))
          throw refuse('xs:decimal arithmetic', 'it would be computed as binary floating point');
        break;
      }
      case 'dynamicFunctionInvocationExpr':
        if (isNodeKey(child(el, 'arguments')?.children[0]))
          throw refuse('map lookup with a node as the key', 'atomize the key first: $map(string(@key))');
        break;
      case 'lookup':
        if (isNodeKey(el.children[0]))
          throw refuse('map lookup with a node as the key', 'atomize the key first: $map?(string(@key))');
        break;
      case 'mapConstructor':
        checkMapKeys(el);
        break;
      case 'elementContent':
      case 'attributeValueExpr':
      case 'contentExpr':
      case 'argExpr':
        // A double written into a constructed node becomes text in JavaScript's form (<a>{1e10}</a>
        // gave <a>10000000000</a>): its value expressions, one sequence level deep, are checked.
        if (el.localName !== 'argExpr' || el.parentElement?.localName?.startsWith('computed')) {
          for (const value of el.children.flatMap((c) => (c.localName === 'sequenceExpr' ? c.children : [c])))
            if (isDouble(value)) throw refuse('a double turned into a string', DOUBLE_HINT);
        }
        break;
      case 'stringConcatenateOp':
      case 'castExpr':
        if ((el.localName !== 'castExpr' || castsToString(el)) && hasDouble(el))
          throw refuse('a double turned into a string', DOUBLE_HINT);
        break;
      default:
        if (ARITHMETIC.has(el.localName) && hasDecimal(el))
          throw refuse('xs:decimal arithmetic', 'it would be computed as binary floating point');
    }
  }
}

/** Two entries with the same literal key: XQDY0137, as the spec says (fontoxpath keeps the last). */
function checkMapKeys(map: Element): void {
  const seen = new Set<string>();
  for (const entry of map.children) {
    const key = child(entry, 'mapKeyExpr')?.children[0];
    if (!key || !/ConstantExpr$/.test(key.localName)) continue;
    const value = `${key.localName === 'stringConstantExpr' ? 's' : 'n'}:${child(key, 'value')?.textContent}`;
    if (seen.has(value)) {
      throw new LibrarianError(
        'librarian.query',
        `XQuery error: XQDY0137: the map constructor has the key ${JSON.stringify(child(key, 'value')?.textContent)} twice`,
        { xquery_code: 'XQDY0137' },
      );
    }
    seen.add(value);
  }
}

/** The query's code with comments and string literals blanked (so a word inside them is not code). */
export function codeOnly(query: string): string {
  let out = '';
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < query.length; i++) {
    const c = query[i]!;
    const next = query[i + 1];
    if (quote) {
      if (c === quote && next === quote) i++;
      else if (c === quote) quote = null;
      out += ' ';
    } else if (c === '(' && next === ':') {
      depth++;
      i++;
      out += '  ';
    } else if (depth > 0) {
      if (c === ':' && next === ')') {
        depth--;
        i++;
      }
      out += ' ';
    } else {
      if (c === '"' || c === "'") quote = c;
      out += c;
    }
  }
  return out;
}

/** For a query fontoxpath could not parse: the refusal naming syntax it has no parser for, or null. */
export function unsupportedSyntax(query: string): LibrarianError | null {
  const code = codeOnly(query);
  for (const [pattern, feature] of SYNTAX) if (pattern.test(code)) return refuse(feature);
  return null;
}
