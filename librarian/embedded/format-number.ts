/**
 * fn:format-number#2 with the default decimal format (F&O 3.1 4.7), which fontoxpath lacks: digit
 * signs 0 and #, grouping ',', decimal '.', percent '%', per-mille '‰', a negative sub-picture after
 * ';', passive prefix and suffix. Returns null for what it does not do (exponents, other digit
 * families, grouping in the fraction), which the caller refuses by name.
 *
 * Rounding is half-to-even on the decimal value. A custom function gets a JS number and cannot
 * tell an xs:decimal from an xs:double: their rounding differs only when the number's shortest
 * decimal form ends exactly on a half at the rounding position while the binary double is not that
 * decimal (2.675 as a decimal rounds to 2.68, as a double to 2.67); that case gives null too.
 */

interface SubPicture {
  prefix: string;
  suffix: string;
  minInt: number;
  minFrac: number;
  maxFrac: number;
  /** Grouping positions counted from the decimal point leftwards, and the repeating size if regular. */
  groups: number[];
  every: number;
  scale: number;
}

function parseSub(picture: string): SubPicture | null {
  const first = picture.search(/[0-9#.,]/);
  if (first < 0) return null;
  let last = picture.length - 1;
  while (!/[0-9#.,]/.test(picture[last]!)) last--;
  const prefix = picture.slice(0, first);
  const suffix = picture.slice(last + 1);
  const body = picture.slice(first, last + 1);
  if (!/^[0#.,]+$/.test(body) || (body.match(/\./g)?.length ?? 0) > 1) return null;
  const marks = `${prefix}${suffix}`;
  // 'e' is 3.1's exponent separator: BaseX rejects a picture with it as a passive character.
  if (/e/.test(marks)) return null;
  const percent = (marks.match(/%/g)?.length ?? 0) + (marks.match(/‰/g)?.length ?? 0);
  if (percent > 1) return null;
  const [int = '', frac = ''] = body.split('.');
  if (frac.includes(',') || /0.*#/.test(int.replace(/,/g, '')) || /#.*0/.test(frac)) return null;
  if (int.endsWith(',') || int.includes(',,')) return null;
  const groups: number[] = [];
  let digits = 0;
  for (let i = int.length - 1; i >= 0; i--) {
    if (int[i] === ',') groups.push(digits);
    else digits++;
  }
  const g = groups[0] ?? 0;
  const regular = g > 0 && groups.every((p, i) => p === g * (i + 1));
  return {
    prefix,
    suffix,
    minInt: (int.match(/0/g) ?? []).length,
    minFrac: (frac.match(/0/g) ?? []).length,
    maxFrac: frac.replace(/,/g, '').length,
    groups,
    every: regular ? g : 0,
    scale: marks.includes('%') ? 2 : marks.includes('‰') ? 3 : 0,
  };
}

/** |x| as plain decimal digits: the shortest form that reads back as x. */
function plain(x: number): { int: string; frac: string } {
  const [mantissa, exp = '0'] = Math.abs(x).toString().split('e');
  const [i = '0', f = ''] = mantissa!.split('.');
  let digits = i + f;
  let point = i.length + Number(exp);
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  return { int: digits.slice(0, point).replace(/^0+(?=\d)/, ''), frac: digits.slice(point) };
}

/**
 * The shortest form is the double's exact value, so a half in it is a true tie for both types:
 * toFixed writes the binary value's exact expansion (V8 computes it exactly up to 100 digits), and
 * it ends in zeros 20 digits past the shortest form only when the two are the same number.
 */
function exact(x: number, fracDigits: number): boolean {
  if (fracDigits + 20 > 100) return false;
  return Math.abs(x)
    .toFixed(fracDigits + 20)
    .endsWith('0'.repeat(20));
}

function increment(digits: string): string {
  const out = [...digits];
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] === '9') out[i] = '0';
    else {
      out[i] = String(Number(out[i]) + 1);
      return out.join('');
    }
  }
  return `1${out.join('')}`;
}

function group(int: string, sub: SubPicture): string {
  let out = '';
  for (let i = 0; i < int.length; i++) {
    const fromRight = int.length - i;
    out += int[i];
    const pos = fromRight - 1;
    if (pos > 0 && (sub.every ? pos % sub.every === 0 : sub.groups.includes(pos))) out += ',';
  }
  return out;
}

export function formatNumber(value: number | null, picture: string): string | null {
  const subs = picture.split(';');
  if (subs.length > 2) return null;
  const positive = parseSub(subs[0]!);
  const negative = subs[1] === undefined ? null : parseSub(subs[1]);
  if (!positive || (subs[1] !== undefined && !negative)) return null;
  if (value === null || Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return null;
  const neg = value < 0 || Object.is(value, -0);
  const sub = neg && negative ? negative : positive;
  let { int, frac } = plain(value);
  const shift = Math.min(sub.scale, frac.length);
  int = (int + frac.slice(0, shift) + '0'.repeat(sub.scale - shift)).replace(/^0+(?=\d)/, '');
  frac = frac.slice(shift);
  if (frac.length > sub.maxFrac) {
    const rest = frac.slice(sub.maxFrac);
    const kept = frac.slice(0, sub.maxFrac);
    const tie = /^50*$/.test(rest);
    if (tie && !exact(value, frac.length)) return null;
    const last = Number((kept || int).slice(-1));
    const up = rest[0]! > '5' || (rest[0] === '5' && !tie) || (tie && last % 2 === 1);
    if (up) {
      const rounded = increment(int + kept);
      int = rounded.slice(0, rounded.length - kept.length);
      frac = rounded.slice(rounded.length - kept.length);
    } else frac = kept;
  }
  frac = frac.replace(/0+$/, '');
  if (frac.length < sub.minFrac) frac += '0'.repeat(sub.minFrac - frac.length);
  if (int === '0' && sub.minInt === 0) {
    if (frac === '') return null;
    int = '';
  }
  if (int.length < sub.minInt) int = '0'.repeat(sub.minInt - int.length) + int;
  // A negative number rounded to zero (or -0): whether it keeps its sign is left open here.
  if (neg && /^0*$/.test(int + frac)) return null;
  const body = group(int, sub) + (frac ? `.${frac}` : '');
  const minus = neg && !negative ? '-' : '';
  return `${minus}${sub.prefix}${body}${sub.suffix}`;
}
