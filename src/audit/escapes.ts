/**
 * A view of a text with its escapes decoded, and where each decoded character came from, so a
 * known secret written as `%73%6B%2D…`, `&#x73;&#107;…`, `&dash;`, `\u0073\u006b…` or `\x73…` (or
 * any mix of those with plain characters) is found, and the span that wrote it is redacted.
 *
 * Decoded: percent escapes (%XX), HTML character references (&#NN; &#xNN;, the `;` optional as
 * browsers read them, and the named references of ASCII characters), and backslash escapes
 * (\uXXXX, \u{X…}, \UXXXXXXXX, \xNN, and \\ \" \/ as JSON writes them). Byte escapes (%XX, \xNN) in a row are read as UTF-8.
 * The view is for finding secrets only: it is never shown or stored.
 */

/** One escape in a layer: where its characters are in the decoded text and where it was written. */
interface Span {
  /** Start in the decoded text. */
  d: number;
  /** Characters it decodes to. */
  dl: number;
  /** [o, oe) in the text this layer was decoded from. */
  o: number;
  oe: number;
}

/**
 * A decoded view of a text: `text`, and where a span of it was written in the original. Each
 * layer of escapes decoded is one view over the previous one.
 */
export class DecodedView {
  constructor(
    readonly text: string,
    private readonly spans: readonly Span[],
    private readonly parent: DecodedView | null,
  ) {}

  /** Where the decoded characters [start, end) were written in the original text. */
  original(start: number, end: number): [number, number] {
    const s = this.#map(start, false);
    const e = this.#map(end, true);
    return this.parent === null ? [s, e] : [this.parent.original(s, s)[0], this.parent.original(e, e)[1]];
  }

  /** Offset in the text below of decoded offset `d`; an end inside an escape takes all of it. */
  #map(d: number, isEnd: boolean): number {
    const spans = this.spans;
    let lo = 0;
    let hi = spans.length - 1;
    let k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (spans[mid]!.d <= d) {
        k = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (k === -1) return d;
    const span = spans[k]!;
    if (d === span.d) return span.o;
    if (d < span.d + span.dl) return isEnd ? span.oe : span.o;
    return span.oe + (d - span.d - span.dl);
  }
}

/**
 * The named character references HTML 5 gives ASCII characters (what an encoder that names
 * every punctuation character writes), plus &nbsp;.
 */
const NAMED = new Map<string, string>(
  Object.entries({
    amp: '&',
    AMP: '&',
    lt: '<',
    LT: '<',
    gt: '>',
    GT: '>',
    quot: '"',
    QUOT: '"',
    apos: "'",
    excl: '!',
    num: '#',
    dollar: '$',
    percnt: '%',
    lpar: '(',
    rpar: ')',
    ast: '*',
    midast: '*',
    plus: '+',
    comma: ',',
    period: '.',
    sol: '/',
    colon: ':',
    semi: ';',
    equals: '=',
    quest: '?',
    commat: '@',
    lsqb: '[',
    lbrack: '[',
    bsol: '\\',
    rsqb: ']',
    rbrack: ']',
    Hat: '^',
    lowbar: '_',
    UnderBar: '_',
    grave: '`',
    DiacriticalGrave: '`',
    lcub: '{',
    lbrace: '{',
    verbar: '|',
    vert: '|',
    VerticalLine: '|',
    rcub: '}',
    rbrace: '}',
    tilde: '~',
    hyphen: '-',
    dash: '-',
    minus: '-',
    nbsp: ' ',
    Tab: '\t',
    NewLine: '\n',
  }),
);

const HEX = /^[0-9a-fA-F]+$/;
const utf8 = new TextDecoder('utf-8');

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** The code point as a string, or undefined when it is none. */
function fromCodePoint(cp: number): string | undefined {
  return Number.isInteger(cp) && cp >= 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : undefined;
}

/** Whether `text` may hold an escape decodeEscapes reads (a cheap test before the pass). */
export function mayHoldEscapes(text: string): boolean {
  return text.indexOf('%') !== -1 || text.indexOf('&') !== -1 || text.indexOf('\\') !== -1;
}

/** XML's own five entities, after the `&`. */
const XML_ENTITIES = ['amp;', 'lt;', 'gt;', 'quot;', 'apos;'];

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * Whether decoding `text` can reveal a secret the plain scan missed. XML text is full of &amp;
 * and &lt;: they matter only when a secret holds one of & < > " ' (`entities`), or when they
 * escape another escape (`&amp;#x73;`). A loop over the few candidate characters: cheaper than
 * one regular expression for all the cases (measured).
 */
export function worthDecoding(text: string, entities: boolean): boolean {
  for (let i = text.indexOf('%'); i !== -1; i = text.indexOf('%', i + 1)) {
    if (isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) return true;
  }
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i + 2)) {
    const c = text.charCodeAt(i + 1);
    if (c === 117 || c === 85 || c === 120 || c === 88 || c === 92) return true;
    if (entities && (c === 34 || c === 47)) return true;
  }
  for (let i = text.indexOf('&'); i !== -1; i = text.indexOf('&', i + 1)) {
    if (entities) return true;
    const own = XML_ENTITIES.find((name) => text.startsWith(name, i + 1));
    if (own === undefined) return true;
    if (own === 'amp;') {
      const c = text.charCodeAt(i + 5);
      if (c === 35 || isLetter(c)) return true;
    }
  }
  return false;
}

/** Where an escape may start. */
const CANDIDATE = /[%&\\]/g;

/** The byte a %XX or \xNN escape at i writes, or -1. */
function byteAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 37) {
    return isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))
      ? Number.parseInt(text.slice(i + 1, i + 3), 16)
      : -1;
  }
  if (c === 92 && (text.charCodeAt(i + 1) === 120 || text.charCodeAt(i + 1) === 88)) {
    return isHex(text.charCodeAt(i + 2)) && isHex(text.charCodeAt(i + 3))
      ? Number.parseInt(text.slice(i + 2, i + 4), 16)
      : -1;
  }
  return -1;
}

/** One layer of decoding over `text`; null when nothing in it was an escape. */
function decodeOnce(text: string, parent: DecodedView | null): DecodedView | null {
  const parts: string[] = [];
  const spans: Span[] = [];
  let copied = 0;
  let length = 0;
  const emit = (upTo: number) => {
    if (upTo > copied) {
      parts.push(text.slice(copied, upTo));
      length += upTo - copied;
    }
  };
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m !== null; m = CANDIDATE.exec(text)) {
    const i = m.index;
    if (byteAt(text, i) !== -1) {
      // A run of byte escapes: ASCII bytes one character each, others read as UTF-8 together.
      emit(i);
      const bytes: number[] = [];
      const starts: number[] = [];
      let j = i;
      for (let b = byteAt(text, j); b !== -1; b = byteAt(text, j)) {
        bytes.push(b);
        starts.push(j);
        j += text.charCodeAt(j) === 37 ? 3 : 4;
      }
      starts.push(j);
      let k = 0;
      while (k < bytes.length) {
        let e = k + 1;
        let chars: string;
        if (bytes[k]! < 0x80) chars = String.fromCharCode(bytes[k]!);
        else {
          while (e < bytes.length && bytes[e]! >= 0x80) e++;
          chars = utf8.decode(Uint8Array.from(bytes.slice(k, e)));
        }
        parts.push(chars);
        spans.push({ d: length, dl: chars.length, o: starts[k]!, oe: starts[e]! });
        length += chars.length;
        k = e;
      }
      copied = j;
      CANDIDATE.lastIndex = j;
      continue;
    }
    const found = text.charCodeAt(i) === 38 ? reference(text, i) : backslash(text, i);
    if (found === undefined) continue;
    emit(i);
    parts.push(found.chars);
    spans.push({ d: length, dl: found.chars.length, o: i, oe: found.end });
    length += found.chars.length;
    copied = found.end;
    CANDIDATE.lastIndex = found.end;
  }
  if (spans.length === 0) return null;
  emit(text.length);
  return new DecodedView(parts.join(''), spans, parent);
}

/** An HTML character reference at i (text[i] is `&`). */
function reference(text: string, i: number): { chars: string; end: number } | undefined {
  if (text.charCodeAt(i + 1) === 35) {
    // &#NN; or &#xNN; (the `;` optional, as browsers read it).
    const hex = text.charCodeAt(i + 2) === 120 || text.charCodeAt(i + 2) === 88;
    let j = i + (hex ? 3 : 2);
    const start = j;
    while (j < text.length && j - start < 8 && (hex ? isHex : isDigit)(text.charCodeAt(j))) j++;
    if (j === start) return undefined;
    const chars = fromCodePoint(Number.parseInt(text.slice(start, j), hex ? 16 : 10));
    if (chars === undefined) return undefined;
    return { chars, end: text.charCodeAt(j) === 59 ? j + 1 : j };
  }
  const semi = text.indexOf(';', i + 1);
  if (semi === -1 || semi - i > 18) return undefined;
  const chars = NAMED.get(text.slice(i + 1, semi));
  return chars === undefined ? undefined : { chars, end: semi + 1 };
}

/**
 * A \u, \u{…} or \U escape at i (text[i] is a backslash), or JSON's escape of a backslash, quote
 * or slash: JSON writes the text `\u0073` as `\\u0073`, which the next pass then reads.
 */
function backslash(text: string, i: number): { chars: string; end: number } | undefined {
  const kind = text.charCodeAt(i + 1);
  if (kind === 92 || kind === 34 || kind === 47) return { chars: text[i + 1]!, end: i + 2 };
  if (kind === 117 && text.charCodeAt(i + 2) === 123) {
    const close = text.indexOf('}', i + 3);
    if (close === -1 || close - i > 11) return undefined;
    const digits = text.slice(i + 3, close);
    if (!HEX.test(digits)) return undefined;
    const chars = fromCodePoint(Number.parseInt(digits, 16));
    return chars === undefined ? undefined : { chars, end: close + 1 };
  }
  const width = kind === 117 ? 4 : kind === 85 ? 8 : 0;
  if (width === 0) return undefined;
  const digits = text.slice(i + 2, i + 2 + width);
  if (digits.length !== width || !HEX.test(digits)) return undefined;
  // \uXXXX is one UTF-16 unit (a pair of them writes one astral character, as JSON does).
  const chars =
    width === 4
      ? String.fromCharCode(Number.parseInt(digits, 16))
      : fromCodePoint(Number.parseInt(digits, 16));
  return chars === undefined ? undefined : { chars, end: i + 2 + width };
}

/** Passes for escapes of escapes (`%2573` is `%73` is `s`); more is not a plausible writer. */
const MAX_PASSES = 3;

/**
 * `text` with its escapes decoded (several layers deep), and where each span came from; null when
 * it holds none.
 */
export function decodeEscapes(text: string): DecodedView | null {
  let view: DecodedView | null = null;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const current: string = view === null ? text : view.text;
    if (!mayHoldEscapes(current)) break;
    const next = decodeOnce(current, view);
    if (next === null) break;
    view = next;
  }
  return view;
}
