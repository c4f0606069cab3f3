/**
 * The decode of what was just encoded. A hop in memory encodes a handler's object and its delivery
 * parses the text right back; that parse and decode were a fifth of the hop (profiled). So
 * encodePayload (codec.ts) builds, beside the text, the value the parse and decode of that text
 * would give, when that is known without them: a root whose properties are all leaves (strings,
 * numbers, booleans) with plain names. Each leaf's value is made by the decoder's own leaf rule
 * (decodeLeaf) from the very text it was written as, so it is the parse's value by construction;
 * test/xml/encoded-twin.test.ts holds the two alike.
 */
import { isWellFormedString } from './chars.ts';
import type { JsonSchema } from './json-schema.ts';
import { decodeLeaf, type Plan, planFor, setOwn } from './plan.ts';

/** The payload encodePayload wrote last, decoded (see above). */
export interface EncodedTwin {
  readonly xml: string;
  /** The root's name. */
  readonly tag: string;
  /** Elements, the root included, and the longest text: what the parse checks against its limits. */
  readonly elements: number;
  readonly longestText: number;
  /** The plan it was decoded by (compared by identity in twinValue). */
  readonly plan: object;
  readonly value: Record<string, unknown>;
}

let lastEncoded: EncodedTwin | undefined;

/**
 * The twin of `xml` if it is what encodePayload wrote last; taken, so no two deliveries ever share
 * one decoded object (a broadcast's second delivery parses).
 */
export function takeEncoded(xml: string): EncodedTwin | undefined {
  const twin = lastEncoded;
  if (twin === undefined || twin.xml !== xml) return undefined;
  lastEncoded = undefined;
  return twin;
}

/** The twin's value if it was decoded as `schema` decodes, else undefined (the caller parses). */
export function twinValue(twin: EncodedTwin, schema: JsonSchema): Record<string, unknown> | undefined {
  return twin.plan === planFor(schema) ? twin.value : undefined;
}

/** Element names that read back as written and need no namespace: ASCII name characters, no colon. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const plainNames = new Map<string, boolean>();

function plainName(name: string): boolean {
  let plain = plainNames.get(name);
  if (plain === undefined) {
    plain = PLAIN_NAME.test(name);
    if (plainNames.size < 10_000) plainNames.set(name, plain);
  }
  return plain;
}

/**
 * The root's decoded value, leaf by leaf as encodeBody writes them (told each value it reads, once);
 * `ok` false once one is not a leaf.
 */
export class TwinBuilder {
  ok = true;
  elements = 1;
  longestText = 0;
  readonly value: Record<string, unknown> = {};

  add(key: string, v: unknown, plan: Plan): void {
    if (!this.ok || v === undefined) return;
    const text = leafText(v);
    if (text === undefined || !plainName(key)) {
      this.ok = false;
      return;
    }
    this.elements++;
    if (text.length > this.longestText) this.longestText = text.length;
    // As decodeObject reads one child element of that name.
    setOwn(this.value, key, plan.arr && !plan.any ? [decodeLeaf(text, plan.items)] : decodeLeaf(text, plan));
  }

  /** The payload `xml`, rooted at `tag`, is written: it is the one takeEncoded finds now. */
  written(xml: string, tag: string, plan: Plan): void {
    lastEncoded =
      this.ok && plainName(tag)
        ? { xml, tag, elements: this.elements, longestText: this.longestText, plan, value: this.value }
        : undefined;
  }
}

/** The text encodeProp writes for a leaf value, or undefined for anything else. */
function leafText(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      // escapeText's references read back as the characters they stand for; a lone surrogate,
      // which it lets through, the parse refuses.
      return isWellFormedString(v) ? v : undefined;
    case 'number':
      return String(v); // finite: encodeProp refused anything else
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      return undefined;
  }
}
