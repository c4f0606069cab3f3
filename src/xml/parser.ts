/**
 * The one XML parser Organism runs on untrusted text. A single forward pass over the string builds
 * the element tree, checks well-formedness, resolves namespaces and enforces every limit as it
 * goes, so refusals happen before anything is built or expanded and there is never a second
 * validation pass. It is iterative (an explicit stack), so 10,000 nested elements cost one limit
 * check, not a stack overflow.
 *
 * Deliberately not supported: DTDs of any kind (DOCTYPE and every `<!` declaration are refused
 * outright, so there are no external entities and no entity expansion), entity references other
 * than the five predefined ones and numeric references, and XML 1.1.
 */
import { XmlError } from '../errors.ts';
import {
  decodeReferences,
  fail,
  isNameCode,
  isNameStartCode,
  isSpaceCode,
  lineCol,
  prepareText,
  XML_NS,
} from './chars.ts';
import type { XmlLimits } from './limits.ts';

/**
 * One element. Character data directly inside it is concatenated into `text` (interleaving with
 * child elements is not kept: payloads are data, not documents; keep the XML text for mixed
 * content). `attrs` inherits nothing, so attribute names such as `__proto__` are plain keys.
 */
export class XmlElement {
  /** Qualified name as written, e.g. `p:shout`. */
  readonly name: string;
  /** Local name (after the prefix). Routing and decoding use this. */
  readonly local: string;
  readonly prefix: string;
  /** Namespace URI the element is in, '' for none. */
  readonly ns: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: XmlElement[] = [];
  text = '';
  /** Offsets of the element in the parsed (line-end normalized) text: `[start, end)`. */
  readonly start: number;
  end = -1;

  constructor(
    name: string,
    local: string,
    prefix: string,
    ns: string,
    attrs: Readonly<Record<string, string>>,
    start: number,
  ) {
    this.name = name;
    this.local = local;
    this.prefix = prefix;
    this.ns = ns;
    this.attrs = attrs;
    this.start = start;
  }
}

export interface ParsedXml {
  /** The text actually parsed (line ends normalized); element offsets refer to it. */
  text: string;
  roots: XmlElement[];
  /** How many elements the text holds, counted against limits.maxElements. */
  elements: number;
}

/**
 * Attribute objects inherit from an empty null-prototype object: nothing is inherited (no
 * `constructor`, `toString`), `__proto__` is a plain key, and unlike `Object.create(null)` (which
 * V8 puts in slow dictionary mode; it made the whole envelope parse ~4x slower) they stay fast.
 */
const ATTRS_PROTO: object = Object.freeze(Object.create(null));

/** Shared, frozen attribute object for the (common) elements that have none. */
export const NO_ATTRS: Readonly<Record<string, string>> = Object.freeze(Object.create(ATTRS_PROTO));

/** `{ xmlns: '' }` as the parser makes it for an element that declares only that. */
const NO_DEFAULT_NS: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(ATTRS_PROTO) as Record<string, string>, { xmlns: '' }),
);

/**
 * An element's attributes as they read with `xmlns=""` written first in its start tag (as
 * buildEnvelope writes it on a payload root): what parsing that start tag would have made.
 */
export function withNoDefaultNamespace(
  attrs: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  if (attrs === NO_ATTRS) return NO_DEFAULT_NS;
  const out = Object.create(ATTRS_PROTO) as Record<string, string>;
  out.xmlns = '';
  for (const key in attrs) out[key] = attrs[key]!;
  return out;
}

/**
 * In-scope namespace bindings: parallel stacks of prefix and URI ('' is the default namespace),
 * searched from the top. Each open element remembers the stack height to restore at its end tag.
 * (Cheaper than a chain of scope objects, and no per-element allocation.)
 */
class Bindings {
  readonly prefixes: string[] = [];
  readonly uris: string[] = [];

  lookup(prefix: string): string | undefined {
    const p = this.prefixes;
    for (let k = p.length - 1; k >= 0; k--) if (p[k] === prefix) return this.uris[k];
    if (prefix === '') return '';
    return prefix === 'xml' ? XML_NS : undefined;
  }

  truncate(height: number): void {
    // pop(), not `length =`: setting an array's length is a runtime call, ~10x the cost of the
    // one or two pops an element's declarations need (measured per xmlns="" payload root).
    const p = this.prefixes;
    const u = this.uris;
    while (p.length > height) {
      p.pop();
      u.pop();
    }
  }
}

/**
 * The open elements, the bindings' height each opened at, and the bindings: kept from one parse to
 * the next (a parse is synchronous and calls nothing that parses), where each parse made five
 * arrays afresh and their first pushes a backing store each, ~5 objects and ~600 bytes of garbage
 * a parse (a hop in memory parses once). At most maxDepth deep, so what they keep is bounded.
 */
const openElements: XmlElement[] = [];
const openHeights: number[] = [];
const openBindings = new Bindings();

const GT = 62;
const SLASH = 47;
const BANG = 33;
const QMARK = 63;
const EQ = 61;
const DQ = 34;
const SQ = 39;
const COLON = 58;

const XML_DECL =
  /^\s+version\s*=\s*(["'])1\.[0-9]+\1(?:\s+encoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._-]*)\2)?(?:\s+standalone\s*=\s*(["'])(?:yes|no)\4)?\s*$/;
const DECLARATION = /^<!\s*(DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)/i;

/**
 * Parses `input` into elements. With `manyRoots` false exactly one root element is allowed (the
 * normal case); true accepts a sequence of root elements (used by repair). `extraElements` moves
 * the element bound: the envelope allows its own elements on top (so a payload accepted at the
 * limit is still accepted inside its envelope), repair passes what earlier parts used (negative).
 */
export function parseXml(input: string, limits: XmlLimits, manyRoots = false, extraElements = 0): ParsedXml {
  const text = prepareText(input, limits);
  const n = text.length;
  const maxText = limits.maxTextLength;
  const maxElements = limits.maxElements + extraElements;
  let elements = 0;
  let i = 0;
  if (n > 0 && text.charCodeAt(0) === 0xfeff) i = 1;
  if (text.startsWith('<?xml', i) && isSpaceCode(text.charCodeAt(i + 5))) i = parseXmlDeclaration(text, i);
  // A text long enough to hold more elements than allowed (each takes 4 characters or more) is
  // counted before anything is built: an element flood costs one scan, not a parse up to the limit.
  if (n - i >= 4 * (maxElements + 1)) {
    const past = startTagPast(text, i, maxElements);
    if (past !== -1) tooManyElements(limits.maxElements, text, past);
  }

  const roots: XmlElement[] = [];
  const stack = openElements;
  const heights = openHeights;
  const bindings = openBindings;
  // A parse that threw left them as they were.
  if (stack.length > 0) {
    stack.length = 0;
    heights.length = 0;
  }
  bindings.truncate(0);
  let cur: XmlElement | null = null;
  // The next "]]>" and "&" at or after the text being read: searched once, and again only once
  // passed, so a text node costs no search of its own (most payloads hold neither).
  let cdataEnd = text.indexOf(']]>', i);
  let amp = text.indexOf('&', i);

  while (i < n) {
    let lt = text.indexOf('<', i);
    if (lt === -1) lt = n;
    if (lt > i) {
      if (cur === null) {
        for (let j = i; j < lt; j++) {
          if (!isSpaceCode(text.charCodeAt(j))) {
            const where = roots.length === 0 ? 'before' : 'after';
            fail('xml.malformed', `text ${where} the root element`, text, j);
          }
        }
      } else {
        let raw = text.slice(i, lt);
        if (cdataEnd !== -1 && cdataEnd < i) cdataEnd = text.indexOf(']]>', i);
        if (cdataEnd !== -1 && cdataEnd + 3 <= lt)
          fail('xml.malformed', '"]]>" is not allowed in text', text, i);
        if (amp !== -1 && amp < i) amp = text.indexOf('&', i);
        if (amp !== -1 && amp < lt) raw = decodeReferences(raw, text, i);
        const t: string = cur.text === '' ? raw : cur.text + raw;
        if (t.length > maxText) textTooLong(cur, t.length, maxText, text, i);
        cur.text = t;
      }
      if (lt === n) break;
      i = lt;
    }
    const c = text.charCodeAt(i + 1);

    if (c === SLASH) {
      // End tag. Fast path: it names the open element exactly.
      if (cur === null) fail('xml.malformed', 'end tag without a matching start tag', text, i);
      const open: XmlElement = cur;
      let j = i + 2;
      if (text.startsWith(open.name, j) && !isNameCode(text.charCodeAt(j + open.name.length))) {
        j += open.name.length;
      } else {
        while (j < n && isNameCode(text.charCodeAt(j))) j++;
        const found = text.slice(i + 2, j);
        const at = lineCol(text, open.start);
        fail(
          'xml.malformed',
          found === ''
            ? `expected the name of an end tag after "</"`
            : `end tag </${found}> does not match <${open.name}> (opened at line ${at.line}, column ${at.column})`,
          text,
          i,
        );
      }
      while (j < n && isSpaceCode(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) !== GT) fail('xml.malformed', `expected ">" to end </${open.name}>`, text, j);
      open.end = j + 1;
      stack.pop();
      bindings.truncate(heights.pop()!);
      cur = stack.length === 0 ? null : stack[stack.length - 1]!;
      i = j + 1;
      continue;
    }

    if (c === BANG) {
      if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i + 4);
        if (end === -1) fail('xml.malformed', 'unterminated comment', text, i);
        const dashes = text.indexOf('--', i + 4);
        if (dashes < end) fail('xml.malformed', '"--" is not allowed inside a comment', text, dashes);
        i = end + 3;
        continue;
      }
      if (text.startsWith('<![CDATA[', i)) {
        if (cur === null) fail('xml.malformed', 'CDATA section outside the root element', text, i);
        const end = text.indexOf(']]>', i + 9);
        if (end === -1) fail('xml.malformed', 'unterminated CDATA section', text, i);
        const t: string = cur.text + text.slice(i + 9, end);
        if (t.length > maxText) textTooLong(cur, t.length, maxText, text, i);
        cur.text = t;
        i = end + 3;
        continue;
      }
      const decl = DECLARATION.exec(text.slice(i, i + 40));
      if (decl !== null) {
        fail(
          'xml.doctype',
          `${decl[1]!.toUpperCase()} declarations are not accepted (no DTDs, no entity declarations)`,
          text,
          i,
        );
      }
      fail('xml.malformed', 'unexpected "<!" (only comments and CDATA sections start this way)', text, i);
    }

    if (c === QMARK) {
      const end = text.indexOf('?>', i + 2);
      if (end === -1) fail('xml.malformed', 'unterminated processing instruction', text, i);
      let j = i + 2;
      while (j < end && isNameCode(text.charCodeAt(j))) j++;
      const target = text.slice(i + 2, j);
      if (target === '') fail('xml.malformed', 'processing instruction without a target', text, i);
      if (target.toLowerCase() === 'xml') {
        fail('xml.malformed', 'the XML declaration is only allowed at the very start', text, i);
      }
      i = end + 2;
      continue;
    }

    // Start tag.
    const tagStart = i;
    let j = i + 1;
    if (!isNameStartCode(text.charCodeAt(j))) {
      fail(
        'xml.malformed',
        j >= n ? 'unexpected end of input after "<"' : '"<" must start a tag; write &lt; for a literal "<"',
        text,
        i,
      );
    }
    j++;
    while (j < n && isNameCode(text.charCodeAt(j))) j++;
    const name = text.slice(i + 1, j);
    if (stack.length >= limits.maxDepth) {
      fail('xml.too_deep', `elements nest deeper than the limit of ${limits.maxDepth} (maxDepth)`, text, i);
    }
    if (++elements > maxElements) tooManyElements(limits.maxElements, text, i);
    if (cur === null && roots.length > 0 && !manyRoots) {
      fail(
        'xml.multiple_roots',
        `second root element <${name}>: exactly one root element is allowed`,
        text,
        i,
      );
    }

    let attrs = NO_ATTRS as Record<string, string>;
    let count = 0;
    const height = bindings.prefixes.length;
    let selfClosing = false;
    for (;;) {
      let k = j;
      while (k < n && isSpaceCode(text.charCodeAt(k))) k++;
      const ch = text.charCodeAt(k);
      if (ch === GT) {
        j = k + 1;
        break;
      }
      if (ch === SLASH) {
        if (text.charCodeAt(k + 1) !== GT)
          fail('xml.malformed', `expected ">" after "/" in <${name}>`, text, k);
        j = k + 2;
        selfClosing = true;
        break;
      }
      if (k >= n) fail('xml.malformed', `unexpected end of input inside the start tag <${name}>`, text, k);
      if (k === j || !isNameStartCode(ch)) {
        fail('xml.malformed', `unexpected character "${text[k]}" in the start tag <${name}>`, text, k);
      }
      let e = k + 1;
      while (e < n && isNameCode(text.charCodeAt(e))) e++;
      const aname = text.slice(k, e);
      while (e < n && isSpaceCode(text.charCodeAt(e))) e++;
      if (text.charCodeAt(e) !== EQ) {
        fail('xml.malformed', `attribute ${aname} on <${name}> has no value (expected ="...")`, text, e);
      }
      e++;
      while (e < n && isSpaceCode(text.charCodeAt(e))) e++;
      const q = text.charCodeAt(e);
      if (q !== DQ && q !== SQ) fail('xml.malformed', `value of attribute ${aname} must be quoted`, text, e);
      const vend = text.indexOf(q === DQ ? '"' : "'", e + 1);
      if (vend === -1) fail('xml.malformed', `unterminated value of attribute ${aname}`, text, e);
      let value = text.slice(e + 1, vend);
      if (value.indexOf('<') !== -1) {
        fail('xml.malformed', `"<" is not allowed in attribute values (attribute ${aname})`, text, e);
      }
      if (value.length > maxText) {
        fail(
          'xml.text_too_long',
          `attribute ${aname} on <${name}> is ${value.length} characters; the limit is ${maxText} (maxTextLength)`,
          text,
          e,
        );
      }
      if (++count > limits.maxAttributes) {
        fail(
          'xml.too_many_attributes',
          `<${name}> has more than ${limits.maxAttributes} attributes (maxAttributes)`,
          text,
          k,
        );
      }
      // Attribute-value normalization (XML 1.0 3.3.3): literal tabs and newlines become spaces.
      if (value.indexOf('\n') !== -1 || value.indexOf('\t') !== -1) value = value.replace(/[\t\n]/g, ' ');
      if (value.indexOf('&') !== -1) value = decodeReferences(value, text, e + 1);
      if (attrs === NO_ATTRS) attrs = Object.create(ATTRS_PROTO) as Record<string, string>;
      else if (attrs[aname] !== undefined)
        fail('xml.malformed', `duplicate attribute ${aname} on <${name}>`, text, k);
      attrs[aname] = value;
      if (aname.startsWith('xmlns') && (aname.length === 5 || aname.charCodeAt(5) === COLON)) {
        const p = aname.length === 5 ? '' : aname.slice(6);
        if (p !== '' && value === '') {
          fail('xml.malformed', `namespace prefix ${p} cannot be undeclared (xmlns:${p}="")`, text, k);
        }
        bindings.prefixes.push(p);
        bindings.uris.push(value);
      }
      j = vend + 1;
    }

    const colon = name.indexOf(':');
    let prefix = '';
    let local = name;
    if (colon !== -1) {
      prefix = name.slice(0, colon);
      local = name.slice(colon + 1);
      if (colon === 0 || local === '' || local.indexOf(':') !== -1 || !isNameStartCode(local.charCodeAt(0))) {
        fail('xml.malformed', `<${name}> is not a valid namespaced name`, text, tagStart);
      }
    }
    const ns = bindings.lookup(prefix);
    if (ns === undefined)
      fail('xml.malformed', `undeclared namespace prefix "${prefix}" on <${name}>`, text, tagStart);
    if (count > 0) checkAttributePrefixes(attrs, bindings, name, text, tagStart);

    const el = new XmlElement(name, local, prefix, ns, attrs, tagStart);
    if (cur === null) roots.push(el);
    else cur.children.push(el);
    if (selfClosing) {
      el.end = j;
      bindings.truncate(height);
    } else {
      stack.push(el);
      heights.push(height);
      cur = el;
    }
    i = j;
  }

  if (cur !== null) {
    const at = lineCol(text, cur.start);
    fail(
      'xml.malformed',
      `unexpected end of input: <${cur.name}> (opened at line ${at.line}, column ${at.column}) is not closed`,
      text,
      n,
    );
  }
  if (roots.length === 0)
    throw new XmlError('xml.empty', 'no XML element found (the input is empty or holds no element)');
  return { text, roots, elements };
}

/**
 * The offset of the start tag that makes more than `max`, or -1. Without comments, CDATA sections
 * and processing instructions (which may hold a literal `<`), every `<` before a name character
 * starts an element in well-formed text: this finds where the parse would stop on the element
 * bound, with the same offset, without building anything. With them, -1 (the parse counts).
 */
function startTagPast(text: string, from: number, max: number): number {
  if (text.indexOf('<!', from) !== -1 || text.indexOf('<?', from) !== -1) return -1;
  let count = 0;
  let at = text.indexOf('<', from);
  while (at !== -1) {
    if (isNameStartCode(text.charCodeAt(at + 1)) && ++count > max) return at;
    at = text.indexOf('<', at + 1);
  }
  return -1;
}

/** Shared with repair, which counts the elements it salvages the same way. */
export function tooManyElements(max: number, text?: string, at?: number): never {
  const message = `more than ${max} elements, the limit for one message (limits.max_xml_elements)`;
  if (text === undefined || at === undefined) throw new XmlError('xml.too_many_elements', message);
  fail('xml.too_many_elements', message, text, at);
}

function textTooLong(el: XmlElement, length: number, max: number, text: string, at: number): never {
  fail(
    'xml.text_too_long',
    `text inside <${el.name}> is ${length} characters; the limit is ${max} (maxTextLength)`,
    text,
    at,
  );
}

function checkAttributePrefixes(
  attrs: Record<string, string>,
  bindings: Bindings,
  name: string,
  text: string,
  at: number,
): void {
  for (const key in attrs) {
    const colon = key.indexOf(':');
    if (colon === -1) continue;
    const p = key.slice(0, colon);
    if (p !== 'xmlns' && bindings.lookup(p) === undefined) {
      fail('xml.malformed', `undeclared namespace prefix "${p}" on attribute ${key} of <${name}>`, text, at);
    }
  }
}

function parseXmlDeclaration(text: string, i: number): number {
  const end = text.indexOf('?>', i);
  if (end === -1) fail('xml.malformed', 'unterminated XML declaration', text, i);
  const m = XML_DECL.exec(text.slice(i + 5, end));
  if (m === null) fail('xml.malformed', 'malformed XML declaration', text, i);
  const encoding = m[3];
  if (encoding !== undefined && !/^utf-?8$/i.test(encoding)) {
    fail('xml.encoding', `encoding "${encoding}" is not accepted; Organism reads UTF-8 only`, text, i);
  }
  return end + 2;
}
