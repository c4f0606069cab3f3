/**
 * Regex flags (matches#3, replace#4, tokenize#3) for fontoxpath, which has only the forms without
 * flags. A flag is not handed to JavaScript's regex engine (its \w, \d, \s, `.` and case folding are
 * not XPath's): the pattern is rewritten, in XPath regex syntax, into one meaning the same without
 * the flag, and fontoxpath's own two-argument function runs it, so its XPath regex semantics stay.
 *
 * - q: every metacharacter escaped (and the replacement taken as is); x and s then do nothing.
 * - x: whitespace removed outside character classes.
 * - s: `.` outside classes becomes [\s\S] (any character, newlines too).
 * - i: each letter outside classes becomes [xX]; inside a class, letters and letter ranges get
 *   their other case. Refused where that is not the same as XPath's case-insensitive mode:
 *   negated or subtracted classes, \p categories, back-references, letters whose case mapping is
 *   not one character each way, and input holding the characters that fold onto ASCII letters
 *   (Kelvin sign, long s, dotted/dotless i...).
 * - m: refused (XPath regexes have no look-behind to write a line start with).
 */
import { LibrarianError } from '../../src/errors.ts';

export class RegexFlagError extends Error {}

function unsupported(what: string): LibrarianError {
  return new LibrarianError(
    'librarian.unsupported',
    `unsupported: regex flags (${what}; the embedded librarian's XQuery engine cannot do it right, so the query was not run). The exist and basex backends run it.`,
    { feature: 'regex flags' },
  );
}

const META = /[\\^$.|?*+()[\]{}-]/g;
const FOLDING = /[\u212A\u212B\u017F\u0130\u0131\u1E9E\u03C2\u1FBE]/;

function otherCase(c: string): string | null {
  const lower = c.toLowerCase();
  const upper = c.toUpperCase();
  if (lower === upper) return '';
  if ([...lower].length !== 1 || [...upper].length !== 1) return null;
  if (lower.toUpperCase() !== upper || upper.toLowerCase() !== lower) return null;
  return c === lower ? upper : lower;
}

/** The flags checked: only s, m, i, x, q, each meaning what F&O 3.1 5.6.1.1 says. */
function checkFlags(flags: string): void {
  if (!/^[smixq]*$/.test(flags)) {
    throw new RegexFlagError(`FORX0001: invalid regular expression flags: ${JSON.stringify(flags)}`);
  }
}

/** The pattern rewritten to mean, without flags, what it means with them. */
export function withoutFlags(pattern: string, flags: string, input: string): string {
  checkFlags(flags);
  if (flags.includes('m') && !flags.includes('q')) throw unsupported('the m flag');
  const q = flags.includes('q');
  const x = flags.includes('x') && !q;
  const s = flags.includes('s') && !q;
  const i = flags.includes('i');
  if (i && FOLDING.test(input))
    throw unsupported('the i flag on text with characters that fold onto ASCII letters');
  if (q) pattern = pattern.replace(META, (c) => `\\${c}`);
  if (!x && !s && !i) return pattern;
  let out = '';
  let depth = 0;
  const chars = [...pattern];
  for (let k = 0; k < chars.length; k++) {
    const c = chars[k]!;
    if (c === '\\') {
      const next = chars[k + 1] ?? '';
      if (i && (next === 'p' || next === 'P')) throw unsupported('the i flag with \\p categories');
      if (i && /[1-9]/.test(next)) throw unsupported('the i flag with back-references');
      let esc = `\\${next}`;
      k++;
      if (next === 'p' || next === 'P') {
        while (k + 1 < chars.length && chars[k] !== '}') esc += chars[++k];
      }
      out += esc;
      continue;
    }
    if (depth > 0) {
      if (c === '[') {
        if (i) throw unsupported('the i flag with a class subtraction');
        depth++;
        out += c;
      } else if (c === ']') {
        depth--;
        out += c;
      } else if (i && chars[k + 1] === '-' && chars[k + 2] && chars[k + 2] !== ']' && chars[k + 2] !== '[') {
        const end = chars[k + 2]!;
        k += 2;
        out += `${c}-${end}${caseRange(c, end)}`;
      } else if (i) {
        const other = otherCase(c);
        if (other === null) throw unsupported(`the i flag with ${JSON.stringify(c)}`);
        out += c + other;
      } else out += c;
      continue;
    }
    if (c === '[') {
      if (i && chars[k + 1] === '^') throw unsupported('the i flag with a negated class');
      depth++;
      out += c;
    } else if (x && /[\t\n\r ]/.test(c)) {
      // removed
    } else if (s && c === '.') {
      out += '[\\s\\S]';
    } else if (i) {
      const other = otherCase(c);
      if (other === null) throw unsupported(`the i flag with ${JSON.stringify(c)}`);
      out += other ? `[${c}${other}]` : c;
    } else out += c;
  }
  return out;
}

/** For a class range under i: the same range in the other case, when both ends are ASCII letters. */
function caseRange(from: string, to: string): string {
  const letters = /^[a-z]$/i;
  const hasLetter = (a: number, b: number) =>
    Array.from({ length: Math.max(0, b - a + 1) }, (_, n) => String.fromCodePoint(a + n)).some(
      (ch) => otherCase(ch) !== '',
    );
  if (letters.test(from) && letters.test(to) && from <= 'Z' === to <= 'Z') {
    const other = (ch: string) => (ch <= 'Z' ? ch.toLowerCase() : ch.toUpperCase());
    return `${other(from)}-${other(to)}`;
  }
  const a = from.codePointAt(0)!;
  const b = to.codePointAt(0)!;
  if (b - a > 0x3000 || hasLetter(a, b)) throw unsupported('the i flag with a class range holding letters');
  return '';
}

/** The replacement string for replace#4: taken as is under q (no $n groups, no \ escapes). */
export function replacementFor(replacement: string, flags: string): string {
  return flags.includes('q') ? replacement.replace(/[\\$]/g, (c) => `\\${c}`) : replacement;
}
