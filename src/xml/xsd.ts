/**
 * A payload's JSON Schema as an XSD 1.0 document, following the codec's mapping (codec.ts):
 * properties are child elements, an array repeats its element, `null` is an empty element.
 *
 * Each constraint becomes the facet that says the same where XSD has one: xs:enumeration (enum,
 * const), xs:minLength/maxLength, xs:min/maxInclusive and Exclusive (numbers, and dates for the
 * format limits), xs:fractionDigits (multipleOf 0.01 and the like), xs:pattern (pattern, translated
 * from ECMAScript by xsd-regex.ts; the formats XSD has no type for; multipleOf 2, 5, 10... of an
 * integer), XSD types for formats (date, dateTime, time, duration, anyURI), minOccurs/maxOccurs
 * (required, minItems, maxItems), xs:unique (uniqueItems of plain values). Where XSD would accept
 * more than the validator, a pattern narrows it to what the codec and ajv accept (numbers as JSON
 * writes them, a date-time with its time zone). Every constraint is also said in words in the
 * element's documentation, also the ones no facet can say (object rules, combinators, a pattern
 * XSD's regex cannot express): the XSD is then looser there than the validator, never stricter
 * except that it is closed (fields the schema does not name are refused) and that XSD types are
 * stricter than a few formats (see FORMATS).
 */
import { escapeAttr, escapeText } from './codec.ts';
import { constraintWords } from './constraints.ts';
import type { PayloadSpec } from './json-schema.ts';
import {
  allowedValues,
  bound,
  isSchema,
  mainType,
  num,
  properties,
  requiredSet,
  type Schema,
  typesOf,
} from './schema-facts.ts';
import { toXsdRegex } from './xsd-regex.ts';

/** A format as XSD: its type, and a pattern narrowing that type (or xs:string) to what ajv-formats accepts. */
interface XsdFormat {
  base: string;
  pattern?: string;
  /** Checks a format limit's value (formatMinimum...) before it becomes a facet of `base`. */
  lexical?: RegExp;
}

const ZONE = '(Z|z|[+\\-][0-9]{2}(:?[0-9]{2})?)';
const IPV4_PART = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const EMAIL_ATOM = "[a-zA-Z0-9!#$%&'*+/=?\\^_`{|}~\\-]+";
const LABEL = '[a-zA-Z0-9]([a-zA-Z0-9\\-]*[a-zA-Z0-9])?';

/**
 * The formats ajv-formats checks (full mode) that XSD can say. xs:dateTime and xs:time want an
 * upper-case T and no 23:59:60, so they are a little stricter than ajv there; ajv's
 * zone-less and week forms that XSD has no type for (iso-date-time, P3W) are left to the words.
 */
const FORMATS: Record<string, XsdFormat> = {
  date: { base: 'xs:date', pattern: '[0-9]{4}-[0-9]{2}-[0-9]{2}', lexical: /^\d{4}-\d\d-\d\d$/ },
  'date-time': {
    base: 'xs:dateTime',
    pattern: `[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?${ZONE}`,
    lexical: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
  },
  time: {
    base: 'xs:time',
    pattern: `[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?${ZONE}`,
    lexical: /^\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
  },
  duration: {
    base: 'xs:duration',
    pattern: 'P([0-9]+Y)?([0-9]+M)?([0-9]+D)?(T([0-9]+H)?([0-9]+M)?([0-9]+S)?)?',
  },
  uri: { base: 'xs:anyURI', pattern: '[a-zA-Z][a-zA-Z0-9+\\-.]*:\\S*' },
  url: { base: 'xs:anyURI', pattern: '([hH][tT][tT][pP][sS]?|[fF][tT][pP])://\\S+' },
  'uri-reference': { base: 'xs:anyURI' },
  uuid: {
    base: 'xs:string',
    pattern: '(urn:uuid:)?[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}',
  },
  ipv4: { base: 'xs:string', pattern: `(${IPV4_PART}\\.){3}${IPV4_PART}` },
  email: { base: 'xs:string', pattern: `${EMAIL_ATOM}(\\.${EMAIL_ATOM})*@(${LABEL}\\.)+${LABEL}` },
  hostname: { base: 'xs:string', pattern: `${LABEL}(\\.${LABEL})*\\.?` },
};

/** Numbers as the codec reads them (JSON's syntax): XSD's own would also take +1, 01, .5 and INF. */
const JSON_NUMBER = '-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+\\-]?[0-9]+)?';
const JSON_INTEGER = '-?(0|[1-9][0-9]*)';

/** One simple type: a built-in base and the facets of each restriction step (patterns in one step are OR-ed, so each is a step). */
interface SimpleType {
  base: string;
  steps: string[][];
}

function facet(name: string, value: string | number): string {
  return `<xs:${name} value="${escapeAttr(String(value))}"/>`;
}

/** A finite number as an xs:decimal / xs:integer literal (no exponent). */
function decimal(n: number): string {
  if (Number.isInteger(n)) return BigInt(n).toString();
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(Math.min(100, Math.ceil(-Math.log10(Math.abs(n))) + 17)).replace(/0+$/, '');
}

/** k when m is 10^-k (0.1, 0.01...): values with at most k decimals. */
function decimalPlaces(m: number): number | undefined {
  if (m >= 1) return undefined;
  const k = Math.round(-Math.log10(m));
  return k <= 20 && Math.abs(m - 10 ** -k) < 10 ** -k * 1e-9 ? k : undefined;
}

/** An integer multipleOf m that divides 10^k (k <= 3) as a pattern on the last k digits. */
function multiplePattern(m: number): string | undefined {
  if (!Number.isInteger(m) || m <= 1) return undefined;
  const k = [1, 2, 3].find((d) => 10 ** d % m === 0);
  if (k === undefined || 10 ** k / m > 50) return undefined;
  const endings: string[] = [];
  const small: string[] = [];
  for (let v = 0; v < 10 ** k; v += m) {
    endings.push(String(v).padStart(k, '0'));
    if (v < 10 ** (k - 1)) small.push(String(v));
  }
  const shortOnes = k > 1 ? `|${small.join('|')}` : '';
  return `-?([0-9]*(${endings.join('|')})${shortOnes})`;
}

function bounds(s: Schema, integer: boolean, show: (n: number) => string): string[] {
  const out: string[] = [];
  const lo = bound(s, 'minimum');
  const hi = bound(s, 'maximum');
  const exLo = bound(s, 'exclusiveMinimum');
  const exHi = bound(s, 'exclusiveMaximum');
  // A facet's value must be of its base type: an integer's bounds are rounded inwards.
  if (integer) {
    if (lo !== undefined) out.push(facet('minInclusive', show(Math.ceil(lo))));
    if (hi !== undefined) out.push(facet('maxInclusive', show(Math.floor(hi))));
    if (exLo !== undefined) out.push(facet('minInclusive', show(Math.floor(exLo) + 1)));
    if (exHi !== undefined) out.push(facet('maxInclusive', show(Math.ceil(exHi) - 1)));
    return tightest(out);
  }
  if (lo !== undefined) out.push(facet('minInclusive', show(lo)));
  if (hi !== undefined) out.push(facet('maxInclusive', show(hi)));
  if (exLo !== undefined) out.push(facet('minExclusive', show(exLo)));
  if (exHi !== undefined) out.push(facet('maxExclusive', show(exHi)));
  return out;
}

/** XSD allows each facet once per step: of repeated integer bounds, the tightest. */
function tightest(facets: string[]): string[] {
  const pick = new Map<string, { value: bigint; text: string }>();
  for (const f of facets) {
    const [, name, value] = /<xs:(\w+) value="([^"]+)"/.exec(f)!;
    const v = BigInt(value!);
    const prev = pick.get(name!);
    const better = prev === undefined || (name === 'minInclusive' ? v > prev.value : v < prev.value);
    if (better) pick.set(name!, { value: v, text: f });
  }
  return [...pick.values()].map((p) => p.text);
}

function enumeration(
  values: unknown[] | undefined,
  fits: (v: unknown) => boolean,
  show: (v: unknown) => string,
): string[] | null {
  if (values === undefined) return [];
  const ok = values.filter(fits);
  return ok.length === 0 ? null : ok.map((v) => facet('enumeration', show(v)));
}

/** The simple type for one JSON type at this position, or null when it admits no value (an enum of other types). */
function simpleType(type: string, s: Schema): SimpleType | null {
  const values = allowedValues(s);
  switch (type) {
    case 'string': {
      const format = values === undefined && typeof s.format === 'string' ? FORMATS[s.format] : undefined;
      const base = format?.base ?? 'xs:string';
      const first = enumeration(values, (v) => typeof v === 'string', String);
      if (first === null) return null;
      if (base === 'xs:string' || base === 'xs:anyURI') {
        if (num(s.minLength) !== undefined) first.push(facet('minLength', s.minLength as number));
        if (num(s.maxLength) !== undefined) first.push(facet('maxLength', s.maxLength as number));
      }
      if (format?.lexical !== undefined) {
        const limits: [string, string][] = [
          ['formatMinimum', 'minInclusive'],
          ['formatMaximum', 'maxInclusive'],
          ['formatExclusiveMinimum', 'minExclusive'],
          ['formatExclusiveMaximum', 'maxExclusive'],
        ];
        for (const [keyword, name] of limits) {
          const v = s[keyword];
          if (typeof v === 'string' && format.lexical.test(v)) first.push(facet(name, v));
        }
      }
      const steps = [first];
      if (format?.pattern !== undefined) steps.push([facet('pattern', format.pattern)]);
      if (typeof s.pattern === 'string') {
        const translated = toXsdRegex(s.pattern);
        if (translated.ok) steps.push([facet('pattern', translated.xsd)]);
      }
      return { base, steps };
    }
    case 'integer': {
      const first = enumeration(
        values,
        (v) => Number.isInteger(v),
        (v) => decimal(v as number),
      );
      if (first === null) return null;
      first.push(...bounds(s, true, decimal));
      const steps = [first, [facet('pattern', JSON_INTEGER)]];
      const m = num(s.multipleOf);
      const multiple = m === undefined ? undefined : multiplePattern(m);
      if (multiple !== undefined) steps.push([facet('pattern', multiple)]);
      return { base: 'xs:integer', steps };
    }
    case 'number': {
      const places = num(s.multipleOf) === undefined ? undefined : decimalPlaces(s.multipleOf as number);
      const first = enumeration(
        values,
        (v) => typeof v === 'number' && Number.isFinite(v),
        (v) => (places === undefined ? String(v) : decimal(v as number)),
      );
      if (first === null) return null;
      if (places !== undefined) {
        // xs:decimal takes no exponent, so the numbers are written out (1500, not 1.5e3).
        first.push(...bounds(s, false, decimal), facet('fractionDigits', places));
        return { base: 'xs:decimal', steps: [first, [facet('pattern', '-?(0|[1-9][0-9]*)(\\.[0-9]+)?')]] };
      }
      first.push(...bounds(s, false, String));
      return { base: 'xs:double', steps: [first, [facet('pattern', JSON_NUMBER)]] };
    }
    case 'boolean': {
      const first = enumeration(values, (v) => typeof v === 'boolean', String);
      return first === null ? null : { base: 'xs:boolean', steps: [first] };
    }
    default:
      return null;
  }
}

function restriction(t: SimpleType, pad: string): string {
  // Innermost step first: each later step restricts the anonymous type of the one before.
  let body = '';
  // The first step has no pattern, so the first pattern can join it; every further one is a step.
  const [first = [], second = [], ...rest] = t.steps.filter((step, i) => i === 0 || step.length > 0);
  const steps = [[...first, ...second], ...rest];
  for (let i = 0; i < steps.length; i++) {
    const facets = steps[i]!.map((f) => `${pad}  ${f}\n`).join('');
    body =
      i === 0
        ? `${pad}<xs:restriction base="${t.base}">\n${facets}${pad}</xs:restriction>\n`
        : `${pad}<xs:restriction>\n${pad}  <xs:simpleType>\n${indent(body, '    ')}${pad}  </xs:simpleType>\n${facets}${pad}</xs:restriction>\n`;
  }
  return body;
}

function indent(text: string, by: string): string {
  return text.replace(/^(?=.)/gm, by);
}

/**
 * The type of a leaf: one simple type, or a union of one per JSON type (a nullable number is a
 * number or the empty element). Undefined when a built-in type name says it all.
 */
function leafType(s: Schema, pad: string): { attr?: string; inline?: string } {
  const types = typesOf(s);
  const members: SimpleType[] = [];
  for (const type of types) {
    const member = simpleType(type, s);
    if (member !== null) members.push(member);
  }
  // codec.ts: an empty element is null only where a string is not also allowed.
  if (types.includes('null') && !types.includes('string')) {
    members.push({ base: 'xs:string', steps: [[facet('length', 0)]] });
  }
  if (members.length === 0) return { attr: 'xs:string' };
  if (members.length === 1 && members[0]!.steps.every((step) => step.length === 0)) {
    return { attr: members[0]!.base };
  }
  if (members.length === 1) {
    return {
      inline: `${pad}<xs:simpleType>\n${restriction(members[0]!, `${pad}  `)}${pad}</xs:simpleType>\n`,
    };
  }
  const union = members
    .map((m) => `${pad}    <xs:simpleType>\n${restriction(m, `${pad}      `)}${pad}    </xs:simpleType>\n`)
    .join('');
  return {
    inline: `${pad}<xs:simpleType>\n${pad}  <xs:union>\n${union}${pad}  </xs:union>\n${pad}</xs:simpleType>\n`,
  };
}

/** The description, then every constraint in words (and why a pattern has no facet). */
function annotation(s: Schema, words: string[], pad: string): string {
  const docs: string[] = [];
  if (typeof s.description === 'string' && s.description !== '') docs.push(s.description);
  const said = [...words];
  if (typeof s.pattern === 'string') {
    const translated = toXsdRegex(s.pattern);
    if (!translated.ok) said.push(`the pattern is not checked by this XSD (${translated.reason})`);
  }
  if (said.length > 0) docs.push(`Constraints: ${said.join('; ')}.`);
  if (docs.length === 0) return '';
  const inner = docs.map((d) => `<xs:documentation>${escapeText(d)}</xs:documentation>`).join('');
  return `${pad}<xs:annotation>${inner}</xs:annotation>\n`;
}

class XsdWriter {
  private uniques = 0;

  /** `<xs:element>` for one property (or the root when `occurs` is ''). */
  element(
    name: string,
    s: Schema,
    occurs: string,
    pad: string,
    depth: number,
    extraWords: string[] = [],
  ): string {
    const open = `${pad}<xs:element name="${escapeAttr(name)}"${occurs}`;
    const doc = annotation(s, [...extraWords, ...constraintWords(s)], `${pad}  `);
    const type = mainType(s);
    const withType = (t: string) =>
      doc === '' ? `${open} type="${t}"/>\n` : `${open} type="${t}">\n${doc}${pad}</xs:element>\n`;
    if (type === 'object' || (type === undefined && isSchema(s.properties))) {
      const props = properties(s);
      if (props.length === 0 || depth > 32) return withType('xs:anyType');
      const required = requiredSet(s);
      // xs:all (any order) unless a property repeats, which XSD 1.0 only allows in xs:sequence.
      const repeats = props.some(([, p]) => mainType(p) === 'array');
      const group = repeats ? 'xs:sequence' : 'xs:all';
      let body = '';
      let keys = '';
      for (const [key, p] of props) {
        body += this.property(key, p, required.has(key), `${pad}      `, depth + 1);
        keys += this.unique(key, p, `${pad}  `);
      }
      return (
        `${open}>\n${doc}${pad}  <xs:complexType>\n${pad}    <${group}>\n${body}` +
        `${pad}    </${group}>\n${pad}  </xs:complexType>\n${keys}${pad}</xs:element>\n`
      );
    }
    if (type === undefined || type === 'array') return withType('xs:anyType');
    if (type === 'null') return `${open}>\n${doc}${pad}  <xs:complexType/>\n${pad}</xs:element>\n`;
    const leaf = leafType(s, `${pad}  `);
    if (leaf.attr !== undefined) return withType(leaf.attr);
    return `${open}>\n${doc}${leaf.inline}${pad}</xs:element>\n`;
  }

  private property(key: string, s: Schema, required: boolean, pad: string, depth: number): string {
    if (mainType(s) !== 'array') return this.element(key, s, required ? '' : ' minOccurs="0"', pad, depth);
    const items = isSchema(s.items) ? { ...s.items } : {};
    if (items.description === undefined && typeof s.description === 'string')
      items.description = s.description;
    // The array's own rules are said on the repeated element, beside its items' rules.
    const arrayWords = constraintWords({ ...s, type: 'array' }).map((w) => `the list: ${w}`);
    const minItems = num(s.minItems) ?? 0;
    const maxItems = num(s.maxItems);
    const max = maxItems === undefined ? 'unbounded' : String(Math.max(0, Math.floor(maxItems)));
    // An empty array is no element at all (codec.ts), so a required one has at least one.
    const least = Math.max(required ? 1 : 0, Math.ceil(minItems));
    const min = maxItems === undefined ? least : Math.min(least, Math.floor(maxItems));
    if (!required && min > 1) {
      // Absent, or at least minItems of them: an optional group around the repeated element.
      const inner = this.element(
        key,
        items,
        ` minOccurs="${min}" maxOccurs="${max}"`,
        `${pad}  `,
        depth,
        arrayWords,
      );
      return `${pad}<xs:sequence minOccurs="0">\n${inner}${pad}</xs:sequence>\n`;
    }
    return this.element(key, items, ` minOccurs="${min}" maxOccurs="${max}"`, pad, depth, arrayWords);
  }

  /** uniqueItems of plain values: no two repeated elements with equal values (xs:unique compares typed values). */
  private unique(key: string, s: Schema, pad: string): string {
    if (mainType(s) !== 'array' || s.uniqueItems !== true || !isSchema(s.items)) return '';
    const itemType = mainType(s.items);
    if (itemType === undefined || itemType === 'object' || itemType === 'array' || itemType === 'null')
      return '';
    this.uniques++;
    return (
      `${pad}<xs:unique name="unique-${this.uniques}">\n` +
      `${pad}  <xs:selector xpath="${escapeAttr(key)}"/>\n${pad}  <xs:field xpath="."/>\n${pad}</xs:unique>\n`
    );
  }
}

/** XSD (1.0) for the payload element: one global element named by the tag, no target namespace. */
export function schemaToXsd(spec: PayloadSpec): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="unqualified">\n' +
    new XsdWriter().element(spec.tag, spec.schema, '', '  ', 0) +
    '</xs:schema>\n'
  );
}
