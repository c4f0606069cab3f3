/**
 * Entry points for parsing untrusted text: one payload element, or raw bytes that must be UTF-8.
 * Both apply the limits in `XmlLimits`; see parser.ts for what is refused and why.
 */
import { XmlError } from '../errors.ts';
import type { XmlLimits } from './limits.ts';
import { parseXml, type XmlElement } from './parser.ts';

/** One parsed element: name, namespace, attributes, child elements and direct text. */
export type XmlNode = XmlElement;

export interface ParsedPayload {
  /** Local name of the root element (routing is by this). */
  tag: string;
  /** The root element's text, trimmed: no XML declaration, comments or whitespace around it. */
  xml: string;
  node: XmlNode;
}

/** Parses text holding exactly one root element. Throws XmlError (with line/column) otherwise. */
export function parsePayload(text: string, limits: XmlLimits): ParsedPayload {
  const doc = parseXml(text, limits, false);
  const node = doc.roots[0]!;
  return { tag: node.local, xml: doc.text.slice(node.start, node.end), node };
}

// `fatal` makes invalid sequences throw instead of becoming U+FFFD; one decoder is reused because
// non-streaming decode() calls do not share state.
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes bytes as UTF-8, refusing any invalid sequence (overlong forms, surrogates, truncation)
 * with the byte offset of the first bad byte. A leading BOM is dropped. With `limits`, the byte
 * limit is checked before any decoding work.
 */
export function decodeUtf8Strict(bytes: Uint8Array, limits?: XmlLimits): string {
  if (limits !== undefined && bytes.length > limits.maxBytes) {
    throw new XmlError(
      'xml.too_large',
      `XML is ${bytes.length} bytes; the limit is ${limits.maxBytes} bytes (maxBytes)`,
    );
  }
  try {
    return strictDecoder.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    throw new XmlError('xml.encoding', `invalid UTF-8 byte sequence at byte offset ${at}`);
  }
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence (error path only). */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    let cp = c & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || (d & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return b.length;
}
