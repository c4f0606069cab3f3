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

/** A decoded view: `at[i]` is where decoded character i starts in the original text. */
export interface DecodedView {
  text: string;
  /** Length text.length + 1; the last entry is the original length. */
  at: Int32Array;
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

/** One pass of decoding; null when nothing in `text` was an escape. */
function decodeOnce(text: string): DecodedView | null {
  const n = text.length;
  let out = '';
  const at: number[] = [];
  let decoded = false;
  let i = 0;
  /** Bytes of a run of %XX / \xNN escapes, with where each escape started. */
  const bytes: number[] = [];
  const byteAt: number[] = [];

  const flushBytes = () => {
    // ASCII bytes map one to one; a run of others is read as UTF-8, each character placed at
    // the escape that began it (its end is where the next one begins).
    let k = 0;
    while (k < bytes.length) {
      if (bytes[k]! < 0x80) {
        out += String.fromCharCode(bytes[k]!);
        at.push(byteAt[k]!);
        k++;
        continue;
      }
      let e = k;
      while (e < bytes.length && bytes[e]! >= 0x80) e++;
      const chars = utf8.decode(Uint8Array.from(bytes.slice(k, e)));
      for (let c = 0; c < chars.length; c++) {
        out += chars[c];
        at.push(byteAt[k]!);
      }
      k = e;
    }
    bytes.length = 0;
    byteAt.length = 0;
  };

  while (i < n) {
    const c = text.charCodeAt(i);
    // %XX and \xNN: bytes.
    if (c === 37 && i + 2 < n && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
      byteAt.push(i);
      i += 3;
      decoded = true;
      continue;
    }
    if (
      c === 92 &&
      (text.charCodeAt(i + 1) === 120 || text.charCodeAt(i + 1) === 88) &&
      isHex(text.charCodeAt(i + 2)) &&
      isHex(text.charCodeAt(i + 3))
    ) {
      bytes.push(Number.parseInt(text.slice(i + 2, i + 4), 16));
      byteAt.push(i);
      i += 4;
      decoded = true;
      continue;
    }
    if (bytes.length > 0) flushBytes();
    const found = c === 38 ? reference(text, i) : c === 92 ? backslash(text, i) : undefined;
    if (found !== undefined) {
      for (let k = 0; k < found.chars.length; k++) {
        out += found.chars[k];
        at.push(i);
      }
      i = found.end;
      decoded = true;
      continue;
    }
    out += text[i];
    at.push(i);
    i++;
  }
  if (bytes.length > 0) flushBytes();
  if (!decoded) return null;
  at.push(n);
  return { text: out, at: Int32Array.from(at) };
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
 * `text` with its escapes decoded (several layers deep), and where each character came from;
 * null when it holds none.
 */
export function decodeEscapes(text: string): DecodedView | null {
  let view: DecodedView | null = null;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const current = view === null ? text : view.text;
    if (!mayHoldEscapes(current)) break;
    const next = decodeOnce(current);
    if (next === null) break;
    if (view !== null) {
      // Compose: where the next layer's characters came from, in the original text.
      const outer = view.at;
      for (let k = 0; k < next.at.length; k++) next.at[k] = outer[next.at[k]!]!;
    }
    view = next;
  }
  return view;
}
