/**
 * A delivery's parse of an envelope (parseEnvelopeOf): what buildEnvelope wrote for the routing
 * record beside it is read without parsing its known head, and what it wrote last, in this same
 * process, without parsing even the payload when encodePayload just wrote that too
 * (encoded-twin.ts). Anything else is parseEnvelope's, so results and refusals are always its own
 * (test/xml/envelope-of.test.ts, test/xml/encoded-twin.test.ts).
 */
import { isOwnTraceparent } from '../telemetry/traceparent.ts';
import { checkSize, isNameStartCode } from './chars.ts';
import { decodePayload } from './codec.ts';
import { type EncodedTwin, takeEncoded, twinValue } from './encoded-twin.ts';
import {
  ENVELOPE_NS,
  type EnvelopeMeta,
  findRootAttribute,
  HEAD,
  lastBuilt,
  type ParsedEnvelope,
  parseEnvelope,
  rootNameEnd,
  TRACE_CONTEXT_NS,
  TRACE_OPEN,
} from './envelope.ts';
import type { JsonSchema } from './json-schema.ts';
import type { XmlLimits } from './limits.ts';
import type { XmlNode } from './parse.ts';
import { parseXml, withNoDefaultNamespace, type XmlElement } from './parser.ts';

const TAIL = '</message>';

/**
 * parseEnvelope for an envelope that should be exactly what buildEnvelope wrote for `meta` (the
 * routing record a transport carries beside it): when it is, only the payload is parsed, since
 * the rest is known text, and the result is the one parseEnvelope gives. Anything else (another
 * writer's spacing, a traceparent other than lower-case hex and dashes, meta values that need
 * escaping, a payload that inherits the envelope's namespace, or a payload that does not parse)
 * is parsed whole by parseEnvelope, so its errors and results are parseEnvelope's own. A delivery
 * parses every envelope once; the meta is about half of a small one.
 */
export function parseEnvelopeOf(text: string, meta: EnvelopeMeta, limits: XmlLimits): ParsedEnvelope {
  const known = lastBuiltOf(text, meta, limits);
  if (known !== undefined) return known;
  const start = builtMetaEnd(text, meta, limits);
  if (start === -1 || !text.endsWith(TAIL)) return parseEnvelope(text, limits);
  const body = text.slice(start, text.length - TAIL.length);
  if (body.charCodeAt(0) !== 60 || !isNameStartCode(body.charCodeAt(1))) return parseEnvelope(text, limits);
  let doc: ReturnType<typeof parseXml>;
  try {
    checkSize(text, limits);
    // One level less: inside the envelope the payload root is the second.
    doc = parseXml(body, payloadLimits(limits), false);
  } catch {
    return parseEnvelope(text, limits);
  }
  const payload = doc.roots[0]!;
  // Without its own default namespace the payload would inherit the envelope's.
  if (payload.attrs.xmlns === undefined) return parseEnvelope(text, limits);
  let payloadXml = doc.text.slice(payload.start, payload.end);
  if (payload.attrs.xmlns === '') {
    const at = findRootAttribute(payloadXml, rootNameEnd(payloadXml), 'xmlns');
    if (at !== null) payloadXml = payloadXml.slice(0, at.start) + payloadXml.slice(at.end);
  }
  const out: ParsedEnvelope = {
    from: meta.from,
    thread: meta.thread,
    tag: payload.local,
    payloadXml,
    node: payload,
  };
  if (meta.to !== undefined && meta.to !== '') out.to = meta.to;
  // Tracing on: the traceparent publish wrote (builtMetaEnd checked it reads back as written).
  if (text.startsWith(TRACE_CLOSE, start - TRACE_CLOSE.length))
    out.traceparent = text.slice(
      text.lastIndexOf(TRACE_OPEN, start) + TRACE_OPEN.length,
      start - TRACE_CLOSE.length,
    );
  return out;
}

const TRACE_CLOSE = '</traceparent></meta>';

/**
 * parseEnvelopeOf for the envelope buildEnvelope wrote last (see lastBuilt), when `text` is it and
 * `meta` is what it was written for: the payload as given is parsed (with one attribute less
 * allowed, for the `xmlns=""` the envelope adds), and the result is the one the envelope's parse
 * gives (test/xml/envelope-of.test.ts). The same conditions as builtMetaEnd's hold, on the values
 * rather than on the text. Undefined when it is not that envelope, or when anything would need a
 * closer look (a parse error included): the caller then reads the text itself.
 */
function lastBuiltOf(text: string, meta: EnvelopeMeta, limits: XmlLimits): ParsedEnvelope | undefined {
  const built = lastBuilt;
  const to = meta.to === '' ? undefined : meta.to;
  if (text !== built.envelope || meta.from !== built.from || meta.thread !== built.thread || to !== built.to)
    return undefined;
  const { from, thread, traceparent, payload: given } = built;
  // What builtMetaEnd's caller asks of the body: an element's start tag first (not `<!--`, `<?`).
  if (given.charCodeAt(0) !== 60 || !isNameStartCode(given.charCodeAt(1))) return undefined;
  if (!plainMeta(from, thread, to)) return undefined;
  const longest = Math.max(ENVELOPE_NS.length, from.length, thread.length, to?.length ?? 0);
  if (limits.maxDepth < 3 || limits.maxAttributes < 1 || limits.maxTextLength < longest) return undefined;
  if (traceparent !== undefined && !plainTraceparent(traceparent, limits)) return undefined;
  const inner = builtPayloadLimits(limits);
  let out: ParsedEnvelope;
  try {
    checkSize(text, limits);
    const twin = takeEncoded(given);
    if (twin !== undefined && twinFits(twin, inner)) {
      out = new EncodedEnvelope(from, thread, given, twin, inner);
    } else {
      const parsed = parseBuiltPayload(given, inner);
      if (parsed === undefined) return undefined;
      out = { from, thread, tag: parsed.node.local, payloadXml: parsed.xml, node: parsed.node };
    }
  } catch {
    return undefined;
  }
  if (to !== undefined) out.to = to;
  if (traceparent !== undefined) out.traceparent = traceparent;
  return out;
}

/** A parsed envelope whose payload this process just encoded: its node is parsed only if asked for. */
class EncodedEnvelope implements ParsedEnvelope {
  to?: string;
  traceparent?: string;
  readonly tag: string;
  #node: XmlNode | undefined;

  constructor(
    readonly from: string,
    readonly thread: string,
    readonly payloadXml: string,
    readonly encoded: EncodedTwin,
    private readonly limits: XmlLimits,
  ) {
    this.tag = encoded.tag;
  }

  get node(): XmlNode {
    this.#node ??= parseBuiltPayload(this.payloadXml, this.limits)!.node;
    return this.#node;
  }
}

/**
 * The payload as buildEnvelope wrote it, parsed as the envelope's parse has it (with the `xmlns=""`
 * the envelope gives it), and its text; undefined when it declares a default namespace of its own.
 */
function parseBuiltPayload(given: string, limits: XmlLimits): { node: XmlElement; xml: string } | undefined {
  const doc = parseXml(given, limits, false);
  const node = doc.roots[0]!;
  if (node.attrs.xmlns !== undefined) return undefined;
  (node as { attrs: XmlElement['attrs'] }).attrs = withNoDefaultNamespace(node.attrs);
  return { node, xml: doc.text.slice(node.start, node.end) };
}

/**
 * Whether the parse of a twin's text would pass the payload's `limits`. Its size and depth (two)
 * are within them already: the whole envelope passed checkSize, and lastBuiltOf asks for depth 3.
 */
function twinFits(twin: EncodedTwin, limits: XmlLimits): boolean {
  return twin.elements <= limits.maxElements && twin.longestText <= limits.maxTextLength;
}

/** The payload decoded by `schema`: the twin's value when it was decoded so, else from the node. */
export function payloadValue(envelope: ParsedEnvelope, schema: JsonSchema): Record<string, unknown> {
  const twin = envelope.encoded;
  return (twin && twinValue(twin, schema)) ?? decodePayload(envelope.node, schema);
}

/** A traceparent builtMetaEnd accepts: lower-case hex and dashes, within the text limit. */
function plainTraceparent(value: string, limits: XmlLimits): boolean {
  if (value.length === 0 || value.length > limits.maxTextLength) return false;
  if (TRACE_CONTEXT_NS.length > limits.maxTextLength) return false;
  if (isOwnTraceparent(value)) return true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || c === 0x2d)) return false;
  }
  return true;
}

/** The payload's limits (see payloadLimits) with one attribute less, for the `xmlns=""` not in the text. */
const builtPayloadLevel = new WeakMap<XmlLimits, XmlLimits>();

function builtPayloadLimits(limits: XmlLimits): XmlLimits {
  const inner = payloadLimits(limits);
  let built = builtPayloadLevel.get(inner);
  if (built === undefined || built.maxAttributes !== inner.maxAttributes - 1) {
    built = { ...inner, maxAttributes: inner.maxAttributes - 1 };
    builtPayloadLevel.set(inner, built);
  }
  return built;
}

/** The limits minus the envelope's level, made once per limits object. */
const payloadLevel = new WeakMap<XmlLimits, XmlLimits>();

function payloadLimits(limits: XmlLimits): XmlLimits {
  let inner = payloadLevel.get(limits);
  if (
    inner === undefined ||
    inner.maxDepth !== limits.maxDepth - 1 ||
    inner.maxBytes !== limits.maxBytes ||
    inner.maxAttributes !== limits.maxAttributes ||
    inner.maxTextLength !== limits.maxTextLength ||
    inner.maxElements !== limits.maxElements
  ) {
    inner = { ...limits, maxDepth: limits.maxDepth - 1 };
    payloadLevel.set(limits, inner);
  }
  return inner;
}

/**
 * Where the payload starts when `text` begins with exactly the head buildEnvelope writes for
 * `meta`, with or without a traceparent (the record does not carry it: it is read here, and only a
 * value of lower-case hex and dashes, as the runtime writes, qualifies), or -1. Only meta values
 * that read back as written qualify (no escaping, no surrounding space, no characters a parse
 * would refuse or change).
 */
function builtMetaEnd(text: string, meta: EnvelopeMeta, limits: XmlLimits): number {
  const { from, thread } = meta;
  const to = meta.to === '' ? undefined : meta.to;
  if (!plainMeta(from, thread, to)) return -1;
  // The known head must pass the limits too: its depth (3), its one attribute, its texts.
  const longest = Math.max(ENVELOPE_NS.length, from.length, thread.length, to?.length ?? 0);
  if (limits.maxDepth < 3 || limits.maxAttributes < 1 || limits.maxTextLength < longest) return -1;
  if (!text.startsWith(HEAD) || !text.startsWith(from, HEAD.length)) return -1;
  let i = HEAD.length + from.length;
  if (!text.startsWith('</from>', i)) return -1;
  i += 7;
  if (to !== undefined) {
    if (!text.startsWith('<to>', i) || !text.startsWith(to, i + 4)) return -1;
    i += 4 + to.length;
    if (!text.startsWith('</to>', i)) return -1;
    i += 5;
  }
  if (!text.startsWith('<thread>', i) || !text.startsWith(thread, i + 8)) return -1;
  i += 8 + thread.length;
  if (!text.startsWith('</thread>', i)) return -1;
  i += 9;
  if (text.startsWith(TRACE_OPEN, i)) {
    i += TRACE_OPEN.length;
    const end = text.indexOf('</traceparent>', i);
    if (end === -1 || end === i) return -1;
    if (end - i > limits.maxTextLength || TRACE_CONTEXT_NS.length > limits.maxTextLength) return -1;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || c === 0x2d)) return -1;
    }
    i += 14;
  }
  if (!text.startsWith('</meta>', i)) return -1;
  return i + 7;
}

/** Printable ASCII but & < >: nothing to escape, written and read back unchanged. */
const PLAIN_META = /^[!-%'-;=?-~]+$/;

/**
 * The value one meta field had when last checked, and whether it was plain: hop after hop a
 * delivery checks the same sender and thread strings, and the regular expression run on each was
 * ~2 % of a hop in memory (profiled).
 */
class PlainMemo {
  #value = '';
  #plain = false;

  is(value: string): boolean {
    if (value !== this.#value) {
      this.#plain = PLAIN_META.test(value);
      this.#value = value;
    }
    return this.#plain;
  }
}

const plainFrom = new PlainMemo();
const plainTo = new PlainMemo();
const plainThread = new PlainMemo();

/** The meta values all plain (see PLAIN_META); `to` may be absent. */
function plainMeta(from: string, thread: string, to: string | undefined): boolean {
  return plainFrom.is(from) && plainThread.is(thread) && (to === undefined || plainTo.is(to));
}
