/**
 * Well-formedness check for documents before they are stored (embedded) or sent (eXist): a
 * malformed document is refused here with its line and column, rather than stored by eXist as
 * something else or failing half-way. A DOCTYPE is refused before parsing: internal entities can
 * expand without bound, and external ones read files.
 */
import { type Document, parseXmlDocument } from 'slimdom';
import { XmlError } from '../src/errors.ts';

/** Line and column of an offset in text, both 1-based. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Offset of a `<!DOCTYPE` in the prolog (before the root element), or -1. */
function doctypeOffset(text: string): number {
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '\ufeff') {
      i++;
    } else if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i + 2);
      if (end < 0) return -1;
      i = end + 2;
    } else if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end < 0) return -1;
      i = end + 3;
    } else if (text.startsWith('<!DOCTYPE', i)) {
      return i;
    } else {
      return -1;
    }
  }
  return -1;
}

const POSITION = /At line (\d+), character (\d+)/;

/** Parses `content` as an XML document or throws XmlError naming what is wrong and where. */
export function parseWellFormed(content: string, what = 'content'): Document {
  if (typeof content !== 'string' || content.trim() === '') {
    throw new XmlError('xml.empty', `${what} is empty; a document needs one root element`);
  }
  const doctype = doctypeOffset(content);
  if (doctype >= 0) {
    const at = lineColumn(content, doctype);
    throw new XmlError(
      'xml.doctype',
      `${what} has a DOCTYPE at line ${at.line}, column ${at.column}; DOCTYPEs and entity declarations are not accepted`,
      at,
    );
  }
  try {
    return parseXmlDocument(content);
  } catch (error) {
    const raw = error instanceof Error ? error.message : String(error);
    const reason = raw.split('\n')[0] ?? raw;
    const m = POSITION.exec(raw);
    const at = m ? { line: Number(m[1]), column: Number(m[2]) } : undefined;
    const code = /single root element/.test(reason) ? 'xml.multiple_roots' : 'xml.malformed';
    const where = at ? ` at line ${at.line}, column ${at.column}` : '';
    throw new XmlError(code, `${what} is not well-formed XML${where}: ${reason}`, at);
  }
}
