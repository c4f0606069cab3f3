/**
 * fn:format-integer for the embedded engine, whose own ignores the 'w' and zero-padded pictures
 * (format-integer(42, 'w') gave "42", format-integer(7, '000') gave "7"). Pictures: decimal digit
 * patterns with grouping separators ('1', '000', '#,##0'), words ('w', 'W', 'Ww', in English, as
 * BaseX writes them), roman numerals ('i', 'I') and letters ('a', 'A'). A picture outside these
 * (another digit family, ';' modifiers such as ordinals) is refused rather than guessed.
 */
const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES: [number, string][] = [
  [1e15, 'quadrillion'],
  [1e12, 'trillion'],
  [1e9, 'billion'],
  [1e6, 'million'],
  [1e3, 'thousand'],
];

function words(n: number): string {
  if (n < 20) return ONES[n]!;
  if (n < 100) return TENS[Math.floor(n / 10)]! + (n % 10 ? `-${ONES[n % 10]}` : '');
  if (n < 1000) return `${ONES[Math.floor(n / 100)]} hundred${n % 100 ? ` ${words(n % 100)}` : ''}`;
  for (const [scale, name] of SCALES) {
    if (n >= scale) {
      const rest = n % scale;
      return `${words(Math.floor(n / scale))} ${name}${rest ? ` ${words(rest)}` : ''}`;
    }
  }
  return String(n);
}

function roman(n: number): string {
  if (n <= 0 || n >= 4000) return String(n);
  const table: [number, string][] = [
    [1000, 'M'],
    [900, 'CM'],
    [500, 'D'],
    [400, 'CD'],
    [100, 'C'],
    [90, 'XC'],
    [50, 'L'],
    [40, 'XL'],
    [10, 'X'],
    [9, 'IX'],
    [5, 'V'],
    [4, 'IV'],
    [1, 'I'],
  ];
  let out = '';
  for (const [value, letters] of table) {
    while (n >= value) {
      out += letters;
      n -= value;
    }
  }
  return out;
}

function letters(n: number): string {
  if (n <= 0) return String(n);
  let out = '';
  while (n > 0) {
    n--;
    out = String.fromCharCode(97 + (n % 26)) + out;
    n = Math.floor(n / 26);
  }
  return out;
}

/** A decimal digit pattern ('0', '000', '#,##0', '#.##0') applied to a non-negative integer. */
function digits(n: number, picture: string): string | null {
  if (!/^[#0-9]*[0-9]$|^[#0-9][#0-9,. '_]*[0-9]$/.test(picture)) return null;
  // Positions (counted from the right, in digits) of each separator, and the separator itself.
  const separators: [number, string][] = [];
  let count = 0;
  let mandatory = 0;
  for (let i = picture.length - 1; i >= 0; i--) {
    const c = picture[i]!;
    if (c === '#' || (c >= '0' && c <= '9')) {
      count++;
      if (c !== '#') mandatory++;
    } else separators.push([count, c]);
  }
  let body = String(n).padStart(mandatory, '0');
  if (separators.length === 0) return body;
  // Regular grouping (all at multiples of the first position, one character): repeat it.
  const [first, sep] = separators[0]!;
  const regular = separators.every(([pos, c], i) => c === sep && pos === first * (i + 1));
  const at = new Map<number, string>(separators);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const fromRight = body.length - i;
    out += body[i];
    const next = fromRight - 1;
    if (next > 0 && (regular ? next % first === 0 : at.has(next))) out += regular ? sep : at.get(next)!;
  }
  body = out;
  return body;
}

/** The formatted number, or null when the picture is one this does not do. */
export function formatInteger(value: number | null, picture: string): string | null {
  if (value === null) return '';
  if (!Number.isSafeInteger(value)) return null;
  if (picture.includes(';')) return null;
  const sign = value < 0 ? '-' : '';
  const n = Math.abs(value);
  let body: string | null;
  switch (picture) {
    case 'w':
      body = words(n);
      break;
    case 'W':
      body = words(n).toUpperCase();
      break;
    case 'Ww':
      body = words(n).replace(/(^|[ -])([a-z])/g, (_, before: string, c: string) => before + c.toUpperCase());
      break;
    case 'i':
      body = roman(n).toLowerCase();
      break;
    case 'I':
      body = roman(n);
      break;
    case 'a':
      body = letters(n);
      break;
    case 'A':
      body = letters(n).toUpperCase();
      break;
    default:
      body = digits(n, picture);
  }
  return body === null ? null : sign + body;
}
