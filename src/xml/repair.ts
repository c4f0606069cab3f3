/**
 * Repair of dirty XML from handlers and LLM agents. Models wrap XML in prose and code fences, stop
 * mid-document, and write bare `&` and `<` in text. repairPayloads turns such output into clean
 * payload elements, one per root element found, in order:
 *
 * 1. character checks and limits as for any parse; DOCTYPE / ENTITY anywhere is refused;
 * 2. fenced blocks (```xml ... ```) are taken when they hold XML, else the whole text;
 * 3. text that already is one or more well-formed elements is used as is (fast path);
 * 4. otherwise a lenient scan drops prose outside elements, escapes a stray `&` or `<` in text where
 *    it cannot start markup, quotes bare attribute values, closes elements left open (at the end or
 *    when an outer end tag arrives), drops end tags that match nothing and an incomplete tag at the
 *    very end;
 * 5. every payload is then parsed strictly with the limits, so what comes out is well-formed.
 *
 * Nothing salvageable -> XmlError('xml.malformed').
 */
import { XmlError } from '../errors.ts';
import { isNameCode, isNameStartCode, isSpaceCode, prepareText } from './chars.ts';
import type { XmlLimits } from './limits.ts';
import { parseXml, tooManyElements } from './parser.ts';

const DTD = /<!\s*(DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)\b/i;
const FENCE = /```[A-Za-z0-9_+-]*[^\n]*\n([\s\S]*?)(?:```|$)/g;
const REFERENCE = /^&(?:#[0-9]{1,9}|#x[0-9a-fA-F]{1,8}|amp|lt|gt|quot|apos);/;

/** Dirty handler/LLM output -> one clean XML string per payload element, in order. */
export function repairPayloads(text: string, limits: XmlLimits): string[] {
  const clean = prepareText(text, limits);
  const dtd = DTD.exec(clean);
  if (dtd !== null) {
    throw new XmlError(
      'xml.doctype',
      `${dtd[1]!.toUpperCase()} declarations are not accepted (no DTDs, no entity declarations)`,
    );
  }
  const out: string[] = [];
  // One element budget for the whole text: every payload found counts, across fenced parts.
  let left = limits.maxElements;
  for (const part of fencedParts(clean)) {
    for (const candidate of salvage(part, limits, left)) {
      const doc = parseXml(candidate, limits, false, left - limits.maxElements);
      left -= doc.elements;
      const root = doc.roots[0]!;
      out.push(doc.text.slice(root.start, root.end));
    }
  }
  if (out.length === 0)
    throw new XmlError('xml.malformed', 'no XML element could be recovered from the text');
  return out;
}

/** The contents of code fences that hold markup, or the whole text when none does. */
function fencedParts(text: string): string[] {
  if (text.indexOf('```') === -1) return [text];
  const parts: string[] = [];
  for (const m of text.matchAll(FENCE)) if (m[1]!.indexOf('<') !== -1) parts.push(m[1]!);
  return parts.length > 0 ? parts : [text.replace(/```[A-Za-z0-9_+-]*/g, '')];
}

/** The payloads in one part; `left` is how many elements the text may still hold. */
function salvage(part: string, limits: XmlLimits, left: number): string[] {
  const trimmed = part.trim();
  if (trimmed === '') return [];
  try {
    const doc = parseXml(trimmed, limits, true, left - limits.maxElements);
    return doc.roots.map((r) => doc.text.slice(r.start, r.end));
  } catch (err) {
    if (!(err instanceof XmlError) || !['xml.malformed', 'xml.empty'].includes(err.code)) throw err;
  }
  return lenient(part, limits, left);
}

function escapeLooseText(s: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 38 && !REFERENCE.test(s.slice(i, i + 12))) {
      out += s.slice(last, i) + '&amp;';
      last = i + 1;
    } else if (c === 60) {
      out += s.slice(last, i) + '&lt;';
      last = i + 1;
    } else if (c === 62 && i >= 2 && s.charCodeAt(i - 1) === 93 && s.charCodeAt(i - 2) === 93) {
      out += s.slice(last, i) + '&gt;';
      last = i + 1;
    }
  }
  return out + s.slice(last);
}

/** Does `<` at i start a tag (`<name`, `</`, `<!`, `<?`) rather than being a stray character? */
function startsMarkup(s: string, i: number): boolean {
  const c = s.charCodeAt(i + 1);
  return isNameStartCode(c) || c === 47 || c === 33 || c === 63;
}

/**
 * The lenient scan. Outside any element, everything up to the next `<name` is prose and dropped.
 * Inside, text is escaped, markup is copied with fixes, and open elements are closed when needed.
 */
function lenient(s: string, limits: XmlLimits, left: number): string[] {
  const n = s.length;
  const payloads: string[] = [];
  const stack: string[] = [];
  let cur = '';
  let i = 0;
  let elements = 0;

  const closeTo = (depth: number): void => {
    while (stack.length > depth) cur += `</${stack.pop()}>`;
    if (depth === 0) {
      payloads.push(cur);
      cur = '';
    }
  };

  while (i < n) {
    if (stack.length === 0) {
      // Seek the next element start; comments, PIs and stray `<` in prose are skipped.
      let lt = s.indexOf('<', i);
      while (lt !== -1 && !isNameStartCode(s.charCodeAt(lt + 1))) lt = s.indexOf('<', lt + 1);
      if (lt === -1) break;
      i = lt;
    } else {
      let lt = s.indexOf('<', i);
      while (lt !== -1 && !startsMarkup(s, lt)) lt = s.indexOf('<', lt + 1);
      const end = lt === -1 ? n : lt;
      cur += escapeLooseText(s.slice(i, end));
      i = end;
      if (lt === -1) break;
    }
    const c = s.charCodeAt(i + 1);

    if (c === 47) {
      // End tag: close back to the matching open element (exact name, else case-insensitive).
      const gt = s.indexOf('>', i);
      if (gt === -1) break; // truncated end tag at the very end: drop it
      const name = s.slice(i + 2, gt).trim();
      let at = stack.lastIndexOf(name);
      if (at === -1) {
        const lower = name.toLowerCase();
        for (let k = stack.length - 1; k >= 0; k--) {
          if (stack[k]!.toLowerCase() === lower) {
            at = k;
            break;
          }
        }
      }
      i = gt + 1;
      if (at !== -1) closeTo(at);
      continue;
    }

    if (c === 33) {
      const isComment = s.startsWith('<!--', i);
      const isCdata = s.startsWith('<![CDATA[', i);
      const close = isComment ? '-->' : isCdata ? ']]>' : '>';
      const end = s.indexOf(close, i);
      if (end === -1) {
        if (isCdata) cur += escapeLooseText(s.slice(i + 9));
        break;
      }
      if (isCdata) cur += s.slice(i, end + 3);
      else if (!isComment) cur += escapeLooseText(s.slice(i, end + 1));
      i = end + close.length;
      continue;
    }

    if (c === 63) {
      const end = s.indexOf('?>', i);
      if (end === -1) break;
      i = end + 2;
      continue;
    }

    // Start tag.
    let j = i + 1;
    while (j < n && isNameCode(s.charCodeAt(j))) j++;
    const name = s.slice(i + 1, j);
    const tag = startTag(s, j, name);
    if (tag === null) break; // incomplete tag at the end: drop it
    if (++elements > left) tooManyElements(limits.maxElements);
    if (stack.length >= limits.maxDepth && !tag.selfClosing) {
      throw new XmlError(
        'xml.too_deep',
        `elements nest deeper than the limit of ${limits.maxDepth} (maxDepth)`,
      );
    }
    cur += tag.text;
    i = tag.end;
    if (tag.selfClosing) {
      if (stack.length === 0) closeTo(0);
    } else stack.push(name);
  }
  if (stack.length > 0) closeTo(0);
  return payloads;
}

/** Reads attributes leniently from j (just after the name) to `>`; null when the input ends first. */
function startTag(
  s: string,
  j: number,
  name: string,
): { text: string; end: number; selfClosing: boolean } | null {
  const n = s.length;
  const seen = new Set<string>();
  let text = `<${name}`;
  while (j < n) {
    const c = s.charCodeAt(j);
    if (c === 62) return { text: `${text}>`, end: j + 1, selfClosing: false };
    if (c === 47 && s.charCodeAt(j + 1) === 62) return { text: `${text}/>`, end: j + 2, selfClosing: true };
    if (!isNameStartCode(c)) {
      j++;
      continue;
    }
    let e = j + 1;
    while (e < n && isNameCode(s.charCodeAt(e))) e++;
    const attr = s.slice(j, e);
    while (e < n && isSpaceCode(s.charCodeAt(e))) e++;
    let value = attr;
    if (s.charCodeAt(e) === 61) {
      e++;
      while (e < n && isSpaceCode(s.charCodeAt(e))) e++;
      const q = s[e];
      if (q === '"' || q === "'") {
        const close = s.indexOf(q, e + 1);
        if (close === -1) return null;
        value = s.slice(e + 1, close);
        e = close + 1;
      } else {
        const start = e;
        while (e < n && !isSpaceCode(s.charCodeAt(e)) && s[e] !== '>' && !(s[e] === '/' && s[e + 1] === '>'))
          e++;
        value = s.slice(start, e);
      }
    }
    if (!seen.has(attr)) {
      seen.add(attr);
      text += ` ${attr}="${escapeLooseText(value).replace(/"/g, '&quot;')}"`;
    }
    j = e;
  }
  return null;
}
