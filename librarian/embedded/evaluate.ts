/**
 * Runs an XQuery 3.1 query with fontoxpath over a DocumentSource and returns what eXist's REST API
 * would: the total number of items and the first `maxResults`, nodes serialized, atomic values as
 * their XPath string value. External variables are bound as typed values (fontoxpath's variables
 * option), never as text. The fake eXist in the tests evaluates with this same function.
 */
import fontoxpath from 'fontoxpath';
import { Document, type Element, type Node, serializeToWellFormedString } from 'slimdom';
import { LibrarianError, OrganismError } from '../../src/errors.ts';
import type { QueryResult, Variables } from '../backend.ts';
import { typeVariables } from '../variables.ts';
import { syntaxError, xqueryError } from '../xquery-errors.ts';
import { type QueryScope, registerLibrarianFunctions, resolveFunctionName } from './functions.ts';
import { isMapOrArray, jsonQuery } from './json-result.ts';
import { ParseFailure, rewriteQuery } from './rewrites.ts';
import { BOUND_PREFIX, conversionChecks, VALUE_PREFIX } from './typed-external.ts';
import { codeOnly, unsupportedSyntax } from './unsupported.ts';

export interface EvaluateOptions {
  variables?: Variables | undefined;
  maxResults: number;
  /** Extra evaluation options (the fake eXist adds its modules' namespaces here). */
  language?: 'xquery' | 'xquery-update';
}

/**
 * fontoxpath values for the variables: xs:integer stays an integer, arrays become sequences.
 * `externals` (the names the query to run declares external): only those are bound, as BaseX and
 * eXist bind only declared ones (fontoxpath would let a bound value replace a variable the query
 * declares with a value of its own); a typed external variable's value goes to the names its
 * rewrite declares (typed-external.ts). Without `externals` (the store's own update queries),
 * every variable is bound by its name.
 */
export function fontoxpathVariables(
  variables: Variables | undefined,
  externals?: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of typeVariables(variables)) {
    let name = v.name;
    if (externals?.has(VALUE_PREFIX + v.name)) {
      name = VALUE_PREFIX + v.name;
      out[BOUND_PREFIX + v.name] = true;
      // Cast to another type, such a double would be written in JavaScript's form (1e+21, 1234567.5)
      // where BaseX writes XPath's (1.0E21, 1.2345675E6), or fail with another error code.
      if (v.type === 'xs:double' && v.values.some((x) => needsExponent(x as number))) {
        throw new LibrarianError(
          'librarian.unsupported',
          `unsupported: a double outside 1e-6 to 1e6 bound to a typed external variable ($${v.name}) (the embedded librarian's XQuery engine cannot convert it right). Bind it to an untyped one, or use the exist or basex backend.`,
          { feature: 'a double outside 1e-6 to 1e6 bound to a typed external variable' },
        );
      }
    } else if (externals && !externals.has(v.name)) continue;
    const single = v.values.length === 1;
    const factory = fontoxpath.createTypedValueFactory(single ? v.type : `${v.type}*`);
    out[name] = factory(single ? (v.values[0] as never) : (v.values as never), fontoxpath.domFacade);
  }
  return out;
}

/** The unprefixed names a query declares external (the variables a caller may bind). */
function externalNames(ast: Element): Set<string> {
  const names = new Set<string>();
  for (const decl of ast.getElementsByTagNameNS(ast.namespaceURI, 'varDecl')) {
    const name = decl.children[0];
    if (!decl.children.some((c) => c.localName === 'external') || name?.localName !== 'varName') continue;
    const prefix = name.getAttributeNS(name.namespaceURI, 'prefix') ?? name.getAttribute('prefix');
    if (!prefix && !name.getAttributeNS(name.namespaceURI, 'URI')) names.add(name.textContent ?? '');
  }
  return names;
}

function isNode(item: unknown): item is Node {
  return typeof item === 'object' && item !== null && typeof (item as Node).nodeType === 'number';
}

const XMLNS = 'http://www.w3.org/2000/xmlns/';

/**
 * An element taken out of its document keeps its in-scope namespaces (XDM namespace nodes), so the
 * declarations its ancestors made are written on it, first, as BaseX and eXist write them; the DOM
 * serializer alone would declare a prefix only where a descendant uses it.
 */
function withInScopeNamespaces(el: Element): Node {
  const inherited = new Map<string, string>();
  for (let p = el.parentElement; p; p = p.parentElement) {
    for (const a of p.attributes) {
      if (a.namespaceURI === XMLNS && !inherited.has(a.name)) inherited.set(a.name, a.value);
    }
  }
  for (const a of el.attributes) if (a.namespaceURI === XMLNS) inherited.delete(a.name);
  if (inherited.size === 0) return el;
  const doc = new Document();
  const copy = doc.createElementNS(el.namespaceURI, el.nodeName);
  for (const [name, value] of inherited) copy.setAttributeNS(XMLNS, name, value);
  for (const a of el.attributes) copy.setAttributeNS(a.namespaceURI, a.name, a.value);
  for (const c of el.childNodes) copy.appendChild(doc.importNode(c, true));
  return copy;
}

/** One result item as eXist's REST API gives it (typed="yes", unwrapped by exist/result.ts). */
export function serializeItem(node: Node): string {
  switch (node.nodeType) {
    case 1: // element
      return serializeToWellFormedString(withInScopeNamespaces(node as Element));
    case 2: // attribute
      return (node as unknown as { value: string }).value;
    case 3: // text
    case 4: // CDATA
      return (node as unknown as { data: string }).data;
    default:
      return serializeToWellFormedString(node);
  }
}

/** What a query runs as: the text (rewrites.ts) and the names it declares external. */
interface Prepared {
  text: string;
  externals: ReadonlySet<string>;
  /**
   * The query declares a variable with a value (`declare variable $v := E`, or an external one's
   * default). fontoxpath's compile cache keeps such a value from the first run of the same text:
   * the next run answered with the collection as it was then, or with the variables bound then.
   */
  prologValues: boolean;
  /** Typed external variables' conversions, run first for their errors (typed-external.ts). */
  conversions: ReadonlyMap<string, string>;
}

/** Queries already checked (by text): the refusal, or what to run. Agents repeat queries; parsing is not free. */
const checked = new Map<string, Error | Prepared>();
const MAX_CHECKED = 256;

function parse(query: string): Element {
  return fontoxpath.parseScript(
    query,
    { language: fontoxpath.evaluateXPath.XQUERY_3_1_LANGUAGE },
    new Document() as never,
  ) as unknown as Element;
}

/**
 * Refuses, before running, what the engine would answer wrong (unsupported.ts), or a syntax error;
 * gives the text to run (rewrites.ts) and its external variables.
 */
function precheck(query: string): Prepared {
  let verdict = checked.get(query);
  if (verdict === undefined) {
    try {
      const text = rewriteQuery(query, parse);
      const ast = parse(text);
      verdict = {
        text,
        externals: externalNames(ast),
        prologValues: ast.getElementsByTagNameNS(ast.namespaceURI, 'varValue').length > 0,
        conversions: conversionChecks(text),
      };
    } catch (error) {
      if (error instanceof OrganismError) verdict = error;
      else {
        const failure = error instanceof ParseFailure ? error : new ParseFailure(error, query);
        verdict = unsupportedSyntax(query) ?? syntaxError(failure.error, failure.source);
      }
    }
    if (checked.size >= MAX_CHECKED) checked.delete(checked.keys().next().value!);
    checked.set(query, verdict);
  }
  if (verdict instanceof Error) throw verdict;
  return verdict;
}

/** serialize() inside a query: nodes as the librarian returns them (fontoxpath has none of its own). */
const xmlSerializer = { serializeToString: (node: Node) => serializeToWellFormedString(node) };

/** An atomic value fontoxpath hands over as an object or a JS number, as XPath's string value. */
function atomicString(item: unknown, asString: string | undefined, index: number): string {
  if (typeof item === 'number') {
    if (item === Number.POSITIVE_INFINITY) return 'INF';
    if (item === Number.NEGATIVE_INFINITY) return '-INF';
    // Beyond 2^53 a JS number is no longer the integer XQuery computed (or a double in XPath's form).
    if (Number.isInteger(item) && Math.abs(item) > Number.MAX_SAFE_INTEGER) {
      throw unsupported('a number beyond 2^53 as a result', index);
    }
  }
  if (asString === '[object Object]')
    throw unsupported('an xs:QName as a result', index, 'return name() or local-name() of the node');
  return asString ?? String(item);
}

function unsupported(feature: string, index: number, hint?: string): LibrarianError {
  return new LibrarianError(
    'librarian.unsupported',
    `unsupported: ${feature} (result item ${index + 1}; the embedded librarian's XQuery engine cannot give it right${hint ? `: ${hint}` : ''}). The exist and basex backends can.`,
    { feature },
  );
}

export function evaluateQuery(text: string, scope: QueryScope, options: EvaluateOptions): QueryResult {
  registerLibrarianFunctions();
  const prepared = options.language === 'xquery-update' ? undefined : precheck(text);
  const query = prepared?.text ?? text;
  const variables = fontoxpathVariables(options.variables, prepared?.externals);
  const evalOptions = {
    xmlSerializer,
    language:
      options.language === 'xquery-update'
        ? fontoxpath.evaluateXPath.XQUERY_UPDATE_3_1_LANGUAGE
        : fontoxpath.evaluateXPath.XQUERY_3_1_LANGUAGE,
    currentContext: scope,
    functionNameResolver: resolveFunctionName,
    // Element constructors in the query build nodes in a scratch document of their own.
    nodesFactory: new Document() as never,
    disableCache: prepared?.prologValues === true,
  };
  const run = (type: number): unknown[] => {
    try {
      // BaseX converts a typed external variable's value as it is bound, used or not.
      if (type === fontoxpath.evaluateXPath.ALL_RESULTS_TYPE) {
        for (const [name, check] of prepared?.conversions ?? []) {
          const value = variables[VALUE_PREFIX + name];
          if (value === undefined) continue;
          fontoxpath.evaluateXPath(check, null, null, { [VALUE_PREFIX + name]: value }, type as never, {
            language: fontoxpath.evaluateXPath.XQUERY_3_1_LANGUAGE,
          });
        }
      }
      return fontoxpath.evaluateXPath(
        query,
        null,
        null,
        variables,
        type as never,
        evalOptions as never,
      ) as unknown[];
    } catch (error) {
      if (!scope.failure && /out of bounds for JavaScript numbers/.test(String((error as Error)?.message))) {
        throw new LibrarianError(
          'librarian.unsupported',
          'unsupported: integers above 2^53 (the embedded librarian computes integers as JavaScript numbers). The exist and basex backends run it.',
          { feature: 'integers above 2^53' },
        );
      }
      const key = /unsupported-(group|map)-key/.exec(String((error as Error)?.message));
      if (!scope.failure && key) {
        const [feature, types] =
          key[1] === 'group'
            ? ['group by clause', 'number, string, boolean, date or time']
            : ['map constructor with computed keys', 'number, string or boolean'];
        throw new LibrarianError(
          'librarian.unsupported',
          `unsupported: ${feature} with a key that is not a ${types} (the embedded librarian cannot tell which such keys are the same). The exist and basex backends run it.`,
          { feature },
        );
      }
      throw scope.failure ?? xqueryError(error);
    }
  };
  const items = run(fontoxpath.evaluateXPath.ALL_RESULTS_TYPE);
  const shown = items.slice(0, Math.max(0, options.maxResults));
  let strings: string[] | undefined;
  const mapAt = shown.findIndex(isMapOrArray);
  // Maps and arrays are written as JSON; the same run gives the other items' string values.
  const json = mapAt < 0 ? undefined : jsonResults(query, variables, evalOptions, mapAt);
  const results = shown.map((item, i) => {
    if (isNode(item)) return serializeItem(item);
    if (typeof item === 'function') throw unsupported('a function as a result', i);
    if (json && isMapOrArray(item)) return json[i]!;
    // fontoxpath hands atomic values over as JS values (a date as a Date, a duration as an object of
    // its own); their XPath string value comes from a second, string-typed evaluation. Queries here
    // only read, so evaluating twice is safe.
    strings ??= json ?? (run(fontoxpath.evaluateXPath.STRINGS_TYPE) as string[]);
    return atomicString(item, strings[i], i);
  });
  // A double outside [1e-6, 1e6) is written by XPath with an exponent (1.0E10), by JavaScript
  // without (10000000000); an integer never is. Which items are doubles is asked only then.
  const large = shown.flatMap((item, i) => (typeof item === 'number' && needsExponent(item) ? [i] : []));
  if (large.length > 0) {
    const kinds = numberKinds(query, variables, evalOptions);
    for (const i of large) {
      const kind = kinds?.[i];
      if (kind === 'd') results[i] = xpathDouble(shown[i] as number);
      else if (kind !== 'n') throw unsupported('a float or double outside 1e-6 to 1e6 as a result', i);
    }
  }
  return { hits: items.length, results };
}

function needsExponent(x: number): boolean {
  const abs = Math.abs(x);
  return Number.isFinite(x) && x !== 0 && (abs >= 1e6 || abs < 1e-6);
}

/** A double in XPath's canonical form outside [1e-6, 1e6): 1.0E10, 1.2345678E7, 1.0E-7. */
export function xpathDouble(x: number): string {
  const [mantissa, exponent] = x.toExponential().split('e') as [string, string];
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

/**
 * For each result item: 'd' for a double, 'n' for another number type, '' otherwise, from the same
 * query with its body wrapped; null when the prolog and body cannot be told apart (a ';' outside
 * the prolog) or the wrapped query fails.
 */
function numberKinds(
  query: string,
  variables: Record<string, unknown>,
  evalOptions: object,
): string[] | null {
  const end = codeOnly(query).lastIndexOf(';');
  const prolog = end < 0 ? '' : query.slice(0, end + 1);
  const body = end < 0 ? query : query.slice(end + 1);
  const wrapped =
    `${prolog}\nfor $organism_item_ in (${body}\n) return ` +
    "if ($organism_item_ instance of xs:double) then 'd' " +
    "else if ($organism_item_ instance of xs:float) then 'f' " +
    "else if ($organism_item_ instance of xs:decimal) then 'n' else ''";
  try {
    return evaluateStrings(wrapped, variables, evalOptions);
  } catch {
    return null;
  }
}

/** The string value of each item of a rewritten query (`wrapped`), evaluated as the query was. */
function evaluateStrings(wrapped: string, variables: Record<string, unknown>, evalOptions: object): string[] {
  return fontoxpath.evaluateXPath(
    wrapped,
    null,
    null,
    variables,
    fontoxpath.evaluateXPath.STRINGS_TYPE,
    evalOptions as never,
  ) as string[];
}

/** Each result item's JSON when it is a map or array (json-result.ts), from a second evaluation. */
function jsonResults(
  query: string,
  variables: Record<string, unknown>,
  evalOptions: object,
  index: number,
): string[] {
  const wrapped = jsonQuery(query);
  const cannot = () =>
    unsupported(
      'a map or array as a result',
      index,
      'its prolog and body could not be told apart to write it as JSON',
    );
  if (wrapped === null) throw cannot();
  try {
    return evaluateStrings(wrapped, variables, evalOptions);
  } catch (error) {
    if (/XPST0003/.test(String((error as Error)?.message))) throw cannot();
    throw (evalOptions as { currentContext: QueryScope }).currentContext.failure ?? xqueryError(error);
  }
}
