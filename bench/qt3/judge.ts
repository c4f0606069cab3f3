/**
 * Judges a librarian answer against a QT3 <result>. The answer is what librarian_query gives a
 * caller: the item count and each item as a string (nodes serialized, maps and arrays as JSON,
 * atomic values as their string value), so types are known only from the text. Assertion
 * expressions (assert, assert-eq's expected value, ...) are evaluated by fontoxpath directly, not
 * through the librarian, with the result items bound as: elements parsed back into nodes, JSON
 * parsed back into maps and arrays, every other item as xs:untypedAtomic (so `$result eq 3` and
 * `$result = 'a'` judge as they would on the typed value, `$result instance of xs:integer` cannot).
 */
import fontoxpath from 'fontoxpath';
import { Document, type Element, type Node, parseXmlDocument, serializeToWellFormedString } from 'slimdom';
import { elementChildren } from './catalog.ts';

export type Answer =
  | { kind: 'ok'; hits: number; results: string[] }
  | { kind: 'error'; code: string | null; message: string }
  | { kind: 'refused'; feature: string; message: string }
  | { kind: 'timeout'; message: string };

/** pass; fail; anycode: an error was expected and one came, with another code. */
export type Verdict = 'pass' | 'fail' | 'anycode';

export interface Judged {
  verdict: Verdict;
  /** Why it failed, for the log of failures. */
  why?: string;
}

type Namespaces = Record<string, string>;

// QT3's assertions are XPath: in XPath "&lt;" is four characters, in XQuery one.
const XPATH = fontoxpath.evaluateXPath.XPATH_3_1_LANGUAGE;
const xmlSerializer = { serializeToString: (node: Node) => serializeToWellFormedString(node) };

function evaluate(expr: string, variables: Record<string, unknown>, ns: Namespaces, type: number): unknown {
  return fontoxpath.evaluateXPath(
    expr,
    null,
    null,
    variables,
    type as never,
    {
      language: XPATH,
      namespaceResolver: (prefix: string) => ns[prefix] ?? null,
      xmlSerializer,
      nodesFactory: new Document(),
    } as never,
  );
}

function parseElement(text: string): Element | null {
  if (!text.startsWith('<')) return null;
  try {
    return parseXmlDocument(text).documentElement;
  } catch {
    return null;
  }
}

function parseJson(text: string): unknown {
  if (!/^[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * `let $result := (...) return` over the result items, and the variables it needs, in one of three
 * readings of the strings: `nodes` (XML parsed back into elements, JSON into maps and arrays),
 * `documents` (XML as document nodes: a query that returned `document { ... }`), `strings` (every
 * item as xs:untypedAtomic: a string that only looks like XML or JSON, serialize()'s result).
 */
type Reading = 'nodes' | 'documents' | 'strings';
const READINGS: Reading[] = ['nodes', 'documents', 'strings'];

function resultBinding(
  results: string[],
  reading: Reading,
): { prefix: string; variables: Record<string, unknown> } {
  const variables: Record<string, unknown> = {};
  const parts = results.map((r, i) => {
    const el = reading === 'strings' ? null : parseElement(r);
    if (el) {
      variables[`r${i}`] = reading === 'documents' ? el.ownerDocument : el;
      return `$r${i}`;
    }
    variables[`r${i}`] = r;
    if (reading !== 'strings' && parseJson(r) !== undefined) return `parse-json($r${i})`;
    return `xs:untypedAtomic($r${i})`;
  });
  return { prefix: `let $result := (${parts.join(', ')}) return `, variables };
}

function stringValue(r: string): string {
  return parseElement(r)?.textContent ?? r;
}

interface Expected {
  kind: string;
  value: unknown;
  text: string;
}

const KIND = `
  if ($x instance of node()) then 'node'
  else if ($x instance of map(*)) then 'json'
  else if ($x instance of array(*)) then 'json'
  else if ($x instance of xs:decimal) then 'decimal'
  else if ($x instance of xs:double or $x instance of xs:float) then 'double'
  else if ($x instance of xs:boolean) then 'boolean'
  else if ($x instance of xs:string or $x instance of xs:untypedAtomic or $x instance of xs:anyURI) then 'string'
  else if ($x instance of xs:anyAtomicType) then 'other'
  else 'function'`;

/** The items of an expected-value expression, evaluated by fontoxpath. */
function expectedItems(expr: string, ns: Namespaces): Expected[] {
  const kinds = evaluate(
    `for $x in (${expr}) return ${KIND}`,
    {},
    ns,
    fontoxpath.evaluateXPath.STRINGS_TYPE,
  ) as string[];
  const values = evaluate(`(${expr})`, {}, ns, fontoxpath.evaluateXPath.ALL_RESULTS_TYPE) as unknown[];
  const texts = evaluate(
    `for $x in (${expr}) return if ($x instance of xs:anyAtomicType) then string($x) else ''`,
    {},
    ns,
    fontoxpath.evaluateXPath.STRINGS_TYPE,
  ) as string[];
  const plain = expr.trim();
  return kinds.map((kind, i) => ({
    kind,
    value: values[i],
    // A numeric literal keeps its own digits (fontoxpath holds numbers as JS doubles).
    text: kinds.length === 1 && /^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(plain) ? plain : (texts[i] ?? ''),
  }));
}

const DECIMAL = /^\s*([+-])?0*(\d*)(?:\.(\d*?)0*)?\s*$/;

function canonicalDecimal(text: string): string | null {
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '' && !/\d/.test(text))) return null;
  const int = m[2] || '0';
  const frac = m[3] ?? '';
  const sign = m[1] === '-' && (int !== '0' || frac !== '') ? '-' : '';
  return `${sign}${int}${frac ? `.${frac}` : ''}`;
}

function xpathNumber(text: string): number {
  const t = text.trim();
  if (t === 'INF' || t === '+INF') return Number.POSITIVE_INFINITY;
  if (t === '-INF') return Number.NEGATIVE_INFINITY;
  if (t === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(t)) return Number.NaN;
  return Number(t);
}

/** One result item against one expected item, as `deep-equal` would on the typed values. */
function sameItem(result: string, e: Expected, ns: Namespaces): boolean {
  // An element where an atomic value is expected compares by its string value (atomization).
  const r = e.kind === 'node' || e.kind === 'json' ? result : stringValue(result);
  switch (e.kind) {
    case 'node': {
      const node = e.value as Node;
      if (node.nodeType === 1 || node.nodeType === 9) return sameXml(r, serializeToWellFormedString(node));
      return r === (node.textContent ?? '');
    }
    case 'decimal': {
      const want = canonicalDecimal(e.text);
      const got = canonicalDecimal(r);
      if (want !== null && got !== null) return want === got;
      return xpathNumber(r) === Number(e.value);
    }
    case 'double': {
      const want = Number(e.value);
      const got = xpathNumber(r);
      if (Number.isNaN(want)) return Number.isNaN(got) && r.trim() === 'NaN';
      return got === want || Math.fround(got) === Math.fround(want);
    }
    case 'boolean':
      return r === String(e.value);
    case 'string':
      return r === e.text;
    case 'json':
      return fontoxpathTrue('deep-equal(parse-json($r), $e)', { r, e: e.value }, ns);
    case 'function':
      return false;
    default:
      // Dates, durations, QNames...: the result's text cast to the expected type and compared.
      return r === e.text || fontoxpathTrue('xs:untypedAtomic($r) eq $e', { r, e: e.value }, ns);
  }
}

function fontoxpathTrue(expr: string, variables: Record<string, unknown>, ns: Namespaces): boolean {
  try {
    return evaluate(expr, variables, ns, fontoxpath.evaluateXPath.BOOLEAN_TYPE) as boolean;
  } catch {
    return false;
  }
}

/** A canonical text of a node: names by namespace URI (prefixes do not count), attributes sorted. */
function canonical(node: Node, dropWhitespace: boolean): string {
  switch (node.nodeType) {
    case 1: {
      const el = node as Element;
      const attrs = el.attributes
        .filter((a) => a.namespaceURI !== 'http://www.w3.org/2000/xmlns/')
        .map((a) => `{${a.namespaceURI ?? ''}}${a.localName}=${JSON.stringify(a.value)}`)
        .sort();
      let inner = '';
      let text = '';
      const flush = () => {
        if (text !== '' && !(dropWhitespace && text.trim() === '')) inner += JSON.stringify(text);
        text = '';
      };
      for (const c of el.childNodes) {
        if (c.nodeType === 3 || c.nodeType === 4) {
          text += (c as unknown as { data: string }).data;
          continue;
        }
        flush();
        inner += canonical(c, dropWhitespace);
      }
      flush();
      return `<{${el.namespaceURI ?? ''}}${el.localName} ${attrs.join(' ')}>${inner}</>`;
    }
    case 7:
      return `<?${(node as unknown as { target: string }).target} ${(node as unknown as { data: string }).data}?>`;
    case 8:
      return `<!--${(node as unknown as { data: string }).data}-->`;
    default:
      return '';
  }
}

const WRAPPER = 'organism-qt3-wrapper';

function wrapped(xml: string): Element | null {
  try {
    return parseXmlDocument(`<${WRAPPER}>${xml}</${WRAPPER}>`).documentElement;
  } catch {
    return null;
  }
}

/** Two XML fragments equal canonically; whitespace-only text is ignored when the exact form differs. */
export function sameXml(a: string, b: string): boolean {
  const x = wrapped(a);
  const y = wrapped(b);
  if (!x || !y) return false;
  return canonical(x, false) === canonical(y, false) || canonical(x, true) === canonical(y, true);
}

function escapeText(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The result sequence as one XML fragment: nodes as they are, atomic values as text, spaced. */
function resultXml(results: string[]): string {
  let out = '';
  let previousAtomic = false;
  for (const r of results) {
    // An element, comment or processing instruction (serialized) is markup; anything else text.
    const node = r.startsWith('<') && wrapped(r) !== null;
    if (!node && previousAtomic) out += ' ';
    out += node ? r : escapeText(r);
    previousAtomic = !node;
  }
  return out;
}

function typeMatches(r: string, itemType: string, ns: Namespaces): boolean {
  const t = itemType.trim();
  if (t === 'item()' || t === 'node()' || t === 'xs:anyAtomicType') return true;
  if (/^(element|document-node)\b/.test(t)) return parseElement(r) !== null;
  if (/^(attribute|text|comment|processing-instruction|namespace-node)\b/.test(t)) return true;
  if (/^map\b/.test(t)) return (parseJson(r) as object | undefined)?.constructor === Object;
  if (/^array\b/.test(t)) return Array.isArray(parseJson(r));
  if (/^(function|\()/.test(t)) return false;
  return fontoxpathTrue(`xs:untypedAtomic($r) castable as ${t}`, { r }, ns);
}

/** assert-type from the text only: the count against the occurrence, each item castable as the type. */
function assertType(results: string[], hits: number, type: string, ns: Namespaces): boolean {
  const m = /^(.*?)\s*([?*+])?$/.exec(type.trim())!;
  const occurrence = m[2] ?? '';
  const countOk =
    occurrence === '*' ||
    (occurrence === '' && hits === 1) ||
    (occurrence === '?' && hits <= 1) ||
    (occurrence === '+' && hits >= 1);
  if (m[1] === 'empty-sequence()') return hits === 0;
  return countOk && results.every((r) => typeMatches(r, m[1]!, ns));
}

function expectedText(el: Element, qt3File: (name: string) => string): string {
  const file = el.getAttribute('file');
  return file ? qt3File(file) : (el.textContent ?? '');
}

export interface JudgeContext {
  namespaces: Namespaces;
  /** Reads a file named by an assertion (assert-xml file="..."), relative to the test set. */
  readFile(name: string): string;
}

function errorCodeMatches(code: string | null, expected: string): boolean {
  if (expected === '*') return true;
  const local = (c: string) => c.replace(/^Q\{[^}]*\}/, '').replace(/^[\w-]+:/, '');
  return code !== null && local(code) === local(expected);
}

/** Judges one assertion (or any-of/all-of/not of several). */
export function judge(answer: Answer, el: Element, ctx: JudgeContext): Judged {
  const name = el.localName;
  if (name === 'result') return judge(answer, elementChildren(el)[0]!, ctx);
  if (name === 'any-of' || name === 'all-of' || name === 'not') {
    const parts = elementChildren(el).map((c) => judge(answer, c, ctx));
    if (name === 'not') {
      return parts[0]!.verdict === 'pass'
        ? { verdict: 'fail', why: 'not: the inner assertion held' }
        : { verdict: 'pass' };
    }
    if (name === 'any-of') {
      if (parts.some((p) => p.verdict === 'pass')) return { verdict: 'pass' };
      return parts.find((p) => p.verdict === 'anycode') ?? parts[0] ?? { verdict: 'fail' };
    }
    return (
      parts.find((p) => p.verdict === 'fail') ??
      parts.find((p) => p.verdict === 'anycode') ?? { verdict: 'pass' }
    );
  }
  if (name === 'error' || name === 'assert-serialization-error') {
    const expected = el.getAttribute('code') ?? '*';
    if (answer.kind !== 'error')
      return { verdict: 'fail', why: `expected error ${expected}, got ${describe(answer)}` };
    if (errorCodeMatches(answer.code, expected)) return { verdict: 'pass' };
    return {
      verdict: 'anycode',
      why: `expected error ${expected}, got ${answer.code ?? 'an error'}: ${answer.message}`,
    };
  }
  if (answer.kind !== 'ok')
    return { verdict: 'fail', why: `expected a result (${name}), got ${describe(answer)}` };
  try {
    return verdictOf(
      assertion(answer, el, ctx),
      `${name} ${(el.textContent ?? '').trim().slice(0, 120)}: got [${answer.results.join(', ').slice(0, 200)}]`,
    );
  } catch (error) {
    return {
      verdict: 'fail',
      why: `${name}: the assertion could not be judged: ${(error as Error).message.split('\n')[0]}`,
    };
  }
}

function verdictOf(ok: boolean, why: string): Judged {
  return ok ? { verdict: 'pass' } : { verdict: 'fail', why };
}

function describe(answer: Answer): string {
  switch (answer.kind) {
    case 'ok':
      return `${answer.hits} item(s) [${answer.results.join(', ').slice(0, 200)}]`;
    case 'error':
      return `error ${answer.code ?? '(no code)'}: ${answer.message.slice(0, 200)}`;
    default:
      return `${answer.kind}: ${answer.message.slice(0, 200)}`;
  }
}

function assertion(answer: { hits: number; results: string[] }, el: Element, ctx: JudgeContext): boolean {
  const { hits, results } = answer;
  const ns = ctx.namespaces;
  const text = el.textContent ?? '';
  switch (el.localName) {
    case 'assert-empty':
      return hits === 0;
    case 'assert-count':
      return hits === Number(text.trim());
    case 'assert-true':
      return hits === 1 && results[0] === 'true';
    case 'assert-false':
      return hits === 1 && results[0] === 'false';
    case 'assert-string-value': {
      const normalize = el.getAttribute('normalize-space') === 'true';
      const norm = (s: string) => (normalize ? s.replace(/\s+/g, ' ').trim() : s);
      // A serialized element cannot be told from a string that looks like one (serialize()'s
      // result): either reading matches.
      return (
        norm(results.map(stringValue).join(' ')) === norm(text) || norm(results.join(' ')) === norm(text)
      );
    }
    case 'assert-eq': {
      const expected = expectedItems(text, ns);
      return hits === 1 && expected.length === 1 && sameItem(results[0]!, expected[0]!, ns);
    }
    case 'assert-deep-eq': {
      const expected = expectedItems(text, ns);
      return hits === expected.length && results.every((r, i) => sameItem(r, expected[i]!, ns));
    }
    case 'assert-permutation': {
      const left = expectedItems(text, ns);
      if (hits !== left.length) return false;
      return results.every((r) => {
        const at = left.findIndex((e) => sameItem(r, e, ns));
        if (at < 0) return false;
        left.splice(at, 1);
        return true;
      });
    }
    case 'assert-xml':
      return hits === results.length && sameXml(resultXml(results), expectedText(el, ctx.readFile));
    case 'assert-type':
      return assertType(results, hits, text, ns);
    case 'assert': {
      // The assertion holds in one reading of the strings (the types did not survive the librarian).
      let failure: unknown;
      let judged = false;
      for (const reading of READINGS) {
        const { prefix, variables } = resultBinding(results, reading);
        try {
          if (evaluate(`${prefix}(${text})`, variables, ns, fontoxpath.evaluateXPath.BOOLEAN_TYPE))
            return true;
          judged = true;
        } catch (error) {
          failure ??= error;
        }
      }
      // Thrown only when no reading could be evaluated at all (reported as "could not be judged").
      if (!judged) throw failure;
      return false;
    }
    case 'serialization-matches': {
      const flags = el.getAttribute('flags') ?? '';
      return fontoxpathTrue(
        'matches($s, $p, $f)',
        { s: resultXml(results), p: expectedText(el, ctx.readFile), f: flags },
        ns,
      );
    }
    default:
      throw new Error(`unknown assertion <${el.localName}>`);
  }
}
