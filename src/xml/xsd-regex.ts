/**
 * A JSON Schema `pattern` (an ECMAScript regular expression, compiled by ajv with the `u` flag)
 * as an XSD 1.0 `xs:pattern`, when the two dialects can say the same thing.
 *
 * The dialects differ in ways that would silently change what a pattern accepts, so each is
 * translated, not copied:
 * - ECMAScript searches (unanchored unless `^`/`$`); XSD matches the whole value. `^` and `$` at
 *   the ends of a top-level alternative become the XSD's implicit anchors; a missing anchor becomes
 *   `[\s\S]*`, XSD's "any character" (its `.` excludes only CR and LF).
 * - `\d`, `\w`, `\s` are ASCII (\s: Unicode spaces) in ECMAScript and Unicode classes in XSD;
 *   they are spelled out. `.` also excludes U+2028/U+2029 in ECMAScript.
 * - `(?:...)`, named groups and lazy quantifiers have no XSD syntax but the same meaning for a
 *   whole-value match (no captures are read, laziness does not change whether a match exists).
 * What XSD cannot say at all is refused with the reason: lookaround, word boundaries (`\b`),
 * back-references, anchors inside a group, Unicode script properties, and characters XML 1.0
 * cannot carry (`\0`, `\f`, `\v`, control escapes), which no XML value could match anyway.
 */
import { isXmlCodePoint } from './chars.ts';

export type XsdRegex = { ok: true; xsd: string } | { ok: false; reason: string };

/** A translated piece, and a short value it matches (null when none was found). */
interface Piece {
  xsd: string;
  sample: string | null;
}

/** Characters tried, in order, for a sample of one character class or escape. */
const SAMPLE_CHARS = [...'aA1x_-. @/:#+Z9zé'];

function sampleChar(source: string): string | null {
  try {
    const re = new RegExp(`^(?:${source})$`, 'u');
    return SAMPLE_CHARS.find((c) => re.test(c)) ?? null;
  } catch {
    return null; // a piece that is no pattern on its own: no sample, the translation stands
  }
}

function join(a: string | null, b: string | null): string | null {
  return a === null || b === null ? null : a + b;
}

class Untranslatable extends Error {}

/** ECMAScript's `\s` without the characters XML 1.0 cannot carry (\v, \f): XSD's `\s` plus Unicode spaces. */
const SPACE_ITEMS = '\\s\\p{Zs}\u2028\u2029\uFEFF';
const CLASS_ESCAPES: Record<string, string> = { d: '0-9', w: 'a-zA-Z0-9_', s: SPACE_ITEMS };
/** Characters with a meaning in XSD regex outside a class (`^` and `$` are plain there). */
const XSD_META = new Set([...'.\\?*+{}()|[]']);
/** Characters escaped inside an XSD class: `-` would start a range or a subtraction. */
const XSD_CLASS_META = new Set([...'\\[]^-']);
/** ECMAScript property names XSD knows under its own short name. */
const CATEGORY_NAMES: Record<string, string> = {
  Letter: 'L',
  Cased_Letter: 'LC',
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Mark: 'M',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Number: 'N',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  punct: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Symbol: 'S',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Other: 'C',
  Control: 'Cc',
  cntrl: 'Cc',
  Format: 'Cf',
  Private_Use: 'Co',
  Unassigned: 'Cn',
};
/** XSD 1.0's category names (it has no LC, Cs, or long names). */
const XSD_CATEGORIES = new Set(
  'L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cn'.split(
    ' ',
  ),
);

function literal(cp: number, inClass: boolean): string {
  if (!isXmlCodePoint(cp)) {
    throw new Untranslatable(`U+${cp.toString(16).toUpperCase().padStart(4, '0')} cannot appear in XML`);
  }
  if (cp === 0xa) return '\\n';
  if (cp === 0xd) return '\\r';
  if (cp === 0x9) return '\\t';
  const ch = String.fromCodePoint(cp);
  return (inClass ? XSD_CLASS_META : XSD_META).has(ch) ? `\\${ch}` : ch;
}

class Translator {
  private i = 0;
  /** Set by alternative() when a top-level alternative ended with `$`. */
  private endAnchor = false;
  constructor(private readonly src: string) {}

  private peek(offset = 0): string | undefined {
    return this.src[this.i + offset];
  }

  private fail(what: string): never {
    throw new Untranslatable(what);
  }

  /** The whole pattern: top-level alternatives, each anchored for XSD's whole-value match. */
  pattern(): Piece {
    const alternatives: string[] = [];
    let sample: string | null | undefined;
    for (;;) {
      let anchoredStart = false;
      if (this.peek() === '^') {
        anchoredStart = true;
        this.i++;
      }
      this.endAnchor = false;
      const body = this.alternative(true);
      sample ??= body.sample;
      alternatives.push(`${anchoredStart ? '' : '[\\s\\S]*'}${body.xsd}${this.endAnchor ? '' : '[\\s\\S]*'}`);
      if (this.peek() !== '|') break;
      this.i++;
    }
    if (this.i < this.src.length) this.fail(`unbalanced ')' at ${this.i}`);
    const xsd = alternatives.length === 1 ? alternatives[0]! : alternatives.map((a) => `(${a})`).join('|');
    return { xsd, sample: sample ?? null };
  }

  /** Terms up to `|`, `)` or the end. A top-level `$` at the very end sets endAnchor. */
  private alternative(topLevel: boolean): Piece {
    let out = '';
    let sample: string | null = '';
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') return { xsd: out, sample };
      if (c === '$') {
        this.i++;
        const next = this.peek();
        if (topLevel && (next === undefined || next === '|')) {
          this.endAnchor = true;
          return { xsd: out, sample };
        }
        this.fail("'$' before the end of the pattern");
      }
      if (c === '^') this.fail("'^' after the start of the pattern");
      const atom = this.atom();
      const q = this.quantifier();
      out += atom.xsd + q.text;
      sample = join(sample, atom.sample === null ? null : atom.sample.repeat(q.min));
    }
  }

  private atom(): Piece {
    const start = this.i;
    const c = this.peek()!;
    if (c === '(') return this.group();
    let xsd: string;
    if (c === '[') xsd = this.characterClass();
    else if (c === '.') {
      this.i++;
      xsd = '[^\\n\\r\u2028\u2029]';
    } else if (c === '\\') xsd = this.escape(false);
    else {
      if ('*+?{'.includes(c)) this.fail(`nothing to repeat at ${this.i}`);
      const cp = this.src.codePointAt(this.i)!;
      this.i += cp > 0xffff ? 2 : 1;
      return { xsd: literal(cp, false), sample: String.fromCodePoint(cp) };
    }
    return { xsd, sample: sampleChar(this.src.slice(start, this.i)) };
  }

  private group(): Piece {
    this.i++; // (
    if (this.peek() === '?') {
      const kind = this.src.slice(this.i, this.i + 3);
      if (kind.startsWith('?:')) this.i += 2;
      else if (kind === '?<=' || kind === '?<!' || kind.startsWith('?=') || kind.startsWith('?!')) {
        this.fail('lookaround (?= (?! (?<= (?<!)');
      } else if (kind.startsWith('?<')) {
        const end = this.src.indexOf('>', this.i);
        if (end === -1) this.fail('unterminated group name');
        this.i = end + 1;
      } else this.fail(`group modifier at ${this.i}`);
    }
    const first = this.alternative(false);
    let out = first.xsd;
    while (this.peek() === '|') {
      this.i++;
      out += `|${this.alternative(false).xsd}`;
    }
    if (this.peek() !== ')') this.fail("missing ')'");
    this.i++;
    return { xsd: `(${out})`, sample: first.sample };
  }

  /** A quantifier as XSD writes it, and the fewest repetitions it allows (for the sample). */
  private quantifier(): { text: string; min: number } {
    const c = this.peek();
    let q = '';
    let min = 1;
    if (c === '*' || c === '+' || c === '?') {
      q = c;
      min = c === '+' ? 1 : 0;
      this.i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (m === null) this.fail(`a '{' that is no quantifier at ${this.i}`);
      q = m[0];
      min = Number(m[1]);
      this.i += m[0].length;
    } else return { text: '', min };
    // Lazy or greedy, a whole-value match exists for the same values.
    if (this.peek() === '?') this.i++;
    const after = this.peek();
    if (after !== undefined && '*+?{'.includes(after)) this.fail(`nothing to repeat at ${this.i}`);
    return { text: q, min };
  }

  /** One code point written as \x, \u, \u{} (a surrogate pair as one), or null if not such an escape. */
  private codePointEscape(): number | null {
    const rest = this.src.slice(this.i);
    const hex = /^\\x([0-9a-fA-F]{2})/.exec(rest) ?? /^\\u\{([0-9a-fA-F]{1,6})\}/.exec(rest);
    if (hex !== null) {
      this.i += hex[0].length;
      return Number.parseInt(hex[1]!, 16);
    }
    const unit = /^\\u([0-9a-fA-F]{4})(?:\\u([dD][c-fC-F][0-9a-fA-F]{2}))?/.exec(rest);
    if (unit === null) return null;
    this.i += unit[0].length;
    const high = Number.parseInt(unit[1]!, 16);
    if (unit[2] !== undefined && high >= 0xd800 && high <= 0xdbff) {
      return (high - 0xd800) * 0x400 + (Number.parseInt(unit[2], 16) - 0xdc00) + 0x10000;
    }
    if (unit[2] !== undefined) this.i -= 6;
    return high;
  }

  /** An escape outside a class (inClass false) or a class atom's escape. */
  private escape(inClass: boolean): string {
    const c = this.peek(1);
    if (c === undefined) this.fail('a trailing backslash');
    const cp = this.codePointEscape();
    if (cp !== null) return literal(cp, inClass);
    this.i += 2;
    const lower = c.toLowerCase();
    if (lower === 'd' || lower === 'w' || lower === 's') {
      const items = CLASS_ESCAPES[lower]!;
      if (c === lower) return inClass ? items : `[${items}]`;
      if (inClass) this.fail(`\\${c} inside a class`);
      return `[^${items}]`;
    }
    if (c === 'p' || c === 'P') return this.property(c, inClass);
    if (c === 'n') return '\\n';
    if (c === 'r') return '\\r';
    if (c === 't') return '\\t';
    if (c === 'b' || c === 'B') this.fail(inClass ? '[\\b] (a backspace)' : 'a word boundary (\\b, \\B)');
    if (c === 'k' || /[1-9]/.test(c)) this.fail('a back-reference');
    if (c === 'c') {
      const letter = this.peek();
      this.i++;
      const code = letter === undefined ? 0 : letter.charCodeAt(0) % 32;
      return literal(code, inClass);
    }
    if (c === '0') return literal(0, inClass);
    if (c === 'f') return literal(0xc, inClass);
    if (c === 'v') return literal(0xb, inClass);
    // An identity escape (a syntax character, '/', or '-' in a class): the character itself.
    return literal(c.codePointAt(0)!, inClass);
  }

  private property(c: 'p' | 'P', inClass: boolean): string {
    const m = /^\{([A-Za-z_]+)(?:=([A-Za-z_]+))?\}/.exec(this.src.slice(this.i));
    if (m === null) this.fail(`\\${c} without {name}`);
    this.i += m[0].length;
    let name = m[1]!;
    if (m[2] !== undefined) {
      if (name !== 'General_Category' && name !== 'gc') this.fail(`the Unicode property ${name}`);
      name = m[2];
    }
    const category = CATEGORY_NAMES[name] ?? name;
    if (!XSD_CATEGORIES.has(category)) this.fail(`the Unicode property ${name}`);
    if (c === 'P' && inClass) this.fail('\\P inside a class');
    return `\\${c}{${category}}`;
  }

  private characterClass(): string {
    this.i++; // [
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.i++;
    }
    let items = '';
    let count = 0;
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail("missing ']'");
      if (c === ']') break;
      const from = this.classAtom();
      count++;
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.i++;
        const to = this.classAtom();
        if (from.cp === null || to.cp === null) this.fail('a range with a class escape at its end');
        items += `${from.text}-${to.text}`;
      } else items += from.text;
    }
    this.i++; // ]
    if (count === 0) {
      if (negated) return '[\\s\\S]';
      this.fail('[] (matches nothing)');
    }
    return `[${negated ? '^' : ''}${items}]`;
  }

  private classAtom(): { text: string; cp: number | null } {
    const c = this.peek()!;
    if (c === '\\') {
      const start = this.i;
      const cp = this.codePointEscape();
      if (cp !== null) return { text: literal(cp, true), cp };
      const next = this.peek(1);
      if (next !== undefined && /[dDwWsSpP]/.test(next)) return { text: this.escape(true), cp: null };
      this.i = start;
      const text = this.escape(true);
      return { text, cp: 0 };
    }
    const cp = this.src.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return { text: literal(cp, true), cp };
  }
}

/** An ECMAScript (`u` flag) pattern as an XSD 1.0 pattern matching the same whole values, or why not. */
export function toXsdRegex(pattern: string): XsdRegex {
  try {
    new RegExp(pattern, 'u');
  } catch (err) {
    return { ok: false, reason: `not a valid regular expression (${(err as Error).message})` };
  }
  try {
    return { ok: true, xsd: new Translator(pattern).pattern().xsd };
  } catch (err) {
    if (err instanceof Untranslatable) return { ok: false, reason: err.message };
    throw err;
  }
}

/**
 * A short value the pattern accepts (the fewest repetitions, the first alternative, a common
 * character of each class), checked with the pattern itself; undefined when none was found.
 */
export function patternSample(pattern: string): string | undefined {
  let re: RegExp;
  try {
    re = new RegExp(pattern, 'u');
    const sample = new Translator(pattern).pattern().sample;
    return sample !== null && sample.length <= 200 && re.test(sample) ? sample : undefined;
  } catch {
    return undefined;
  }
}
