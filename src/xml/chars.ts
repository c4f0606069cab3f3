/**
 * Character-level rules shared by the parser, the repairer and the encoder: XML name characters,
 * the characters XML 1.0 forbids, entity references, and turning an offset into line:column for
 * error messages. Everything here is on the hot path, so it works on char codes, not regexes.
 */
import { XmlError } from '../errors.ts';
import type { XmlLimits } from './limits.ts';

export const XML_NS = 'http://www.w3.org/XML/1998/namespace';

const START = 1;
const NAME = 2;
/** ASCII name-character classes: bit 1 may start a name, bit 2 may continue one. */
const ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_:]/.test(ch)) ASCII[c] = START | NAME;
  else if (/[0-9.-]/.test(ch)) ASCII[c] = NAME;
}

/** XML 1.0 NameStartChar. Surrogate halves are accepted: the input was checked for lone ones. */
export function isNameStartCode(c: number): boolean {
  if (c < 128) return (ASCII[c]! & START) !== 0;
  return (
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    c === 0x200c ||
    c === 0x200d ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xdfff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd)
  );
}

/** XML 1.0 NameChar. */
export function isNameCode(c: number): boolean {
  if (c < 128) return (ASCII[c]! & NAME) !== 0;
  return isNameStartCode(c) || c === 0xb7 || (c >= 0x300 && c <= 0x36f) || c === 0x203f || c === 0x2040;
}

export function isSpaceCode(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;
}

/** True when `s` is a valid XML element name (namespace prefix allowed, at most one colon). */
export function isXmlName(s: string): boolean {
  if (s.length === 0 || !isNameStartCode(s.charCodeAt(0)) || s.charCodeAt(0) === 58) return false;
  let colons = 0;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isNameCode(c)) return false;
    if (c === 58) {
      colons++;
      if (colons > 1 || i === s.length - 1) return false;
    }
  }
  return true;
}

/** Code points XML 1.0 allows in a document (the `Char` production). */
export function isXmlCodePoint(cp: number): boolean {
  return (
    cp === 0x9 ||
    cp === 0xa ||
    cp === 0xd ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/** 1-based line and column (in UTF-16 units) of `offset` in `text`. Only called on the error path. */
export function lineCol(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lastNewline = -1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lastNewline = i;
  }
  return { line, column: offset - lastNewline };
}

type XmlCode = ConstructorParameters<typeof XmlError>[0];

/** Throws an XmlError whose message ends with where in `text` the problem is. */
export function fail(code: XmlCode, message: string, text: string, offset: number): never {
  const { line, column } = lineCol(text, Math.min(offset, text.length));
  throw new XmlError(code, `${message} (line ${line}, column ${column})`, { line, column });
}

export function codePointLabel(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Characters XML 1.0 forbids outright (NUL, C0 controls other than tab/newline/CR, U+FFFE/U+FFFF). */
const FORBIDDEN = /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const hasIsWellFormed = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function';

export function isWellFormedString(s: string): boolean {
  return hasIsWellFormed
    ? (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : !LONE_SURROGATE.test(s);
}

/** Refuses text over the byte limit. Cheap when the text is clearly small: no byte count needed. */
export function checkSize(text: string, limits: XmlLimits): void {
  const max = limits.maxBytes;
  // UTF-8 needs at most 3 bytes per UTF-16 unit and at least 1.
  if (text.length * 3 <= max) return;
  const bytes = text.length > max ? text.length : Buffer.byteLength(text, 'utf8');
  if (bytes > max) {
    const shown = text.length > max ? `at least ${bytes}` : String(bytes);
    throw new XmlError('xml.too_large', `XML is ${shown} bytes; the limit is ${max} bytes (maxBytes)`);
  }
}

/**
 * Character checks every parse starts with (each is one native scan): size, lone surrogates, NUL
 * and other forbidden characters. Returns the text with line ends normalized to `\n` as XML 1.0
 * requires, so offsets, lines and text content agree everywhere after this point.
 */
export function prepareText(text: string, limits: XmlLimits): string {
  checkSize(text, limits);
  if (!isWellFormedString(text)) {
    const at = text.search(LONE_SURROGATE);
    fail(
      'xml.encoding',
      `lone surrogate ${codePointLabel(text.charCodeAt(at))} (not valid Unicode) is not allowed`,
      text,
      at,
    );
  }
  const bad = FORBIDDEN.exec(text);
  if (bad !== null) {
    const cp = bad[0].charCodeAt(0);
    const what = cp === 0 ? 'NUL character (U+0000)' : `character ${codePointLabel(cp)}`;
    fail('xml.encoding', `${what} is not allowed in XML`, text, bad.index);
  }
  return text.indexOf('\r') === -1 ? text : text.replace(/\r\n?/g, '\n');
}

/**
 * Replaces entity and character references in `raw` (found at `base` in `text`). Only the five
 * predefined entities and numeric references exist here: no DTD is ever read, so nothing can
 * define more (no XXE, no entity expansion).
 */
export function decodeReferences(raw: string, text: string, base: number): string {
  let out = '';
  let last = 0;
  let amp = raw.indexOf('&');
  while (amp !== -1) {
    const semi = raw.indexOf(';', amp + 1);
    if (semi === -1 || semi - amp > 12) {
      fail('xml.malformed', 'bare "&" in text: write &amp; (or a reference such as &lt;)', text, base + amp);
    }
    const ref = raw.slice(amp + 1, semi);
    let ch: string;
    switch (ref) {
      case 'lt':
        ch = '<';
        break;
      case 'gt':
        ch = '>';
        break;
      case 'amp':
        ch = '&';
        break;
      case 'quot':
        ch = '"';
        break;
      case 'apos':
        ch = "'";
        break;
      default: {
        let cp = Number.NaN;
        if (/^#x[0-9a-fA-F]{1,8}$/.test(ref)) cp = Number.parseInt(ref.slice(2), 16);
        else if (/^#[0-9]{1,9}$/.test(ref)) cp = Number.parseInt(ref.slice(1), 10);
        else {
          fail(
            'xml.malformed',
            `undefined entity &${ref}; (only &lt; &gt; &amp; &quot; &apos; and numeric references exist)`,
            text,
            base + amp,
          );
        }
        if (!isXmlCodePoint(cp)) {
          fail(
            'xml.encoding',
            `character reference &${ref}; is not an allowed XML character`,
            text,
            base + amp,
          );
        }
        ch = String.fromCodePoint(cp);
      }
    }
    out += raw.slice(last, amp) + ch;
    last = semi + 1;
    amp = raw.indexOf('&', last);
  }
  return out + raw.slice(last);
}
