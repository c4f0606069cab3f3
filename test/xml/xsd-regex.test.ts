/**
 * JSON Schema patterns (ECMAScript, `u` flag, searched) as XSD patterns (whole-value match):
 * for each pattern, xmllint with the translated XSD accepts exactly the values the ECMAScript
 * regular expression accepts, on values chosen at each dialect difference.
 */
import { describe, expect, it } from 'vitest';
import { escapeAttr, escapeText } from '../../src/xml/codec.ts';
import { patternSample, toXsdRegex } from '../../src/xml/xsd-regex.ts';
import { xmllintValidate } from '../helpers/xmllint.ts';

function xsdFor(pattern: string): string {
  return `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="v"><xs:simpleType><xs:restriction base="xs:string">
    <xs:pattern value="${escapeAttr(pattern)}"/>
  </xs:restriction></xs:simpleType></xs:element>
</xs:schema>`;
}

const CASES: [pattern: string, values: string[]][] = [
  ['^[0-9]{5}$', ['10115', '1011', '101155', 'a0115', '١٠١١٥']],
  ['[0-9]{5}', ['10115', 'zip 10115 here', '1011']],
  ['^ab', ['ab', 'abc', 'xab']],
  ['ab$', ['ab', 'xab', 'abx']],
  ['^a|b$', ['a', 'ax', 'xb', 'xbx', 'xa']],
  ['^(?:red|green)$', ['red', 'green', 'redgreen', 'blue']],
  ['^(?<word>\\w+)-\\d+$', ['ab_1-42', 'é-42', 'ab-٤٢', 'ab-']],
  ['^\\s+$', [' ', '\t', '\u00a0', '\u2003', 'x']],
  ['^\\S+$', ['abc', 'a b', 'a\u00a0b']],
  ['^\\D\\W$', ['a!', '1!', 'aa', '\u0661!']],
  ['^.+$', ['abc', 'a\nb', 'a\u2028b']],
  ['^[^.]+\\.[a-z]{2,3}$', ['example.com', 'example.info', 'a.b.com', '.com']],
  ['^[\\w.+-]+@[\\w-]+\\.[\\w.]+$', ['ada@example.com', 'a+b@x-y.co.uk', 'ada@@example.com']],
  ['^[-a]+$', ['-a-', 'b']],
  ['^[\\]\\[^]+$', ['[]^', 'a']],
  ['^\\$\\d+(\\.\\d{2})?$', ['$10', '$10.50', '10', '$10.5']],
  ['^a.*?b$', ['ab', 'axxb', 'axxbx']],
  ['^\\u00e9\\x41\\u{1F600}$', ['éA😀', 'eA😀']],
  ['^\\p{Lu}\\p{Letter}*$', ['Émile', 'émile', 'Ab1']],
  ['^[\\p{L}\\d ]+$', ['Ada 1', 'Ada-1']],
  ['^(a|b){2,3}$', ['ab', 'aba', 'a', 'abab']],
  ['^$', ['', 'x']],
  ['[^]', ['', 'x']],
  ['^\\{\\}\\(\\)\\|\\?\\*\\+\\/\\\\$', ['{}()|?*+/\\', '{}']],
];

describe('toXsdRegex: xmllint accepts what the ECMAScript pattern accepts', () => {
  it.each(CASES)('%s', (pattern, values) => {
    const translated = toXsdRegex(pattern);
    if (!translated.ok) throw new Error(`not translated: ${translated.reason}`);
    const xsd = xsdFor(translated.xsd);
    const check = xmllintValidate(
      xsd,
      values.map((v) => `<v>${escapeText(v).replace(/\n/g, '&#10;')}</v>`),
    );
    expect(check.schemaErrors).toBe('');
    const expected = values.map((v) => new RegExp(pattern, 'u').test(v));
    expect(check.valid, `${translated.xsd}\n${check.messages}`).toEqual(expected);
    // Each case has values on both sides, so a translation that accepts or refuses everything fails.
    expect(expected).toContain(true);
    if (pattern !== '[^]') expect(expected).toContain(false);
  });
});

describe('toXsdRegex: what XSD cannot say is refused with its reason', () => {
  it.each([
    ['^(?=.*\\d)\\w+$', 'lookaround'],
    ['^(?!x)', 'lookaround'],
    ['(?<=a)b', 'lookaround'],
    ['\\bword\\b', 'word boundary'],
    ['^(a)\\1$', 'back-reference'],
    ['^(?<q>a)\\k<q>$', 'back-reference'],
    ['(^a)', "'^' after the start"],
    ['(a$)', "'$' before the end"],
    ['^\\p{Script=Greek}+$', 'Script'],
    ['^a\\0$', 'U+0000 cannot appear in XML'],
    ['^\\f$', 'U+000C cannot appear in XML'],
    ['[]', 'matches nothing'],
    ['^[\\Da]$', 'inside a class'],
    ['(', 'not a valid regular expression'],
  ])('%s: %s', (pattern, reason) => {
    const translated = toXsdRegex(pattern);
    expect(translated.ok).toBe(false);
    if (!translated.ok) expect(translated.reason).toContain(reason);
  });
});

describe('patternSample: a value for the example payload', () => {
  it('matches its pattern whenever one is given', () => {
    expect(patternSample('^[A-Z]{2}-\\d{3}$')).toBe('AA-111');
    expect(patternSample('cat')).toBe('cat');
    expect(patternSample('^(?:red|green)$')).toBe('red');
    let found = 0;
    for (const [pattern] of CASES) {
      const sample = patternSample(pattern);
      if (sample === undefined) continue;
      found++;
      expect(new RegExp(pattern, 'u').test(sample), `${pattern}: ${sample}`).toBe(true);
    }
    expect(found).toBeGreaterThan(CASES.length / 2);
  });

  it('gives none for a pattern it cannot follow', () => {
    expect(patternSample('^(?=.*\\d)\\w{8}$')).toBeUndefined();
  });
});
