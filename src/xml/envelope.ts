/**
 * The message envelope, wire-compatible with xml-pipeline's envelope.xsd:
 *
 *   <message xmlns="https://xml-pipeline.org/ns/envelope/v1">
 *     <meta><from>a</from><to>b</to><thread>uuid</thread></meta>
 *     <payload-root>...</payload-root>
 *   </message>
 *
 * Payload namespace. A payload keeps its own namespace. Payloads are usually in no namespace, and
 * written inside `<message xmlns="...envelope...">` they would silently inherit the envelope's
 * default namespace when a namespace-aware tool (lxml, xmllint, fontoxpath) reads the envelope. So
 * buildEnvelope writes `xmlns=""` on a payload root that declares no default namespace of its own,
 * which leaves every element of the payload in exactly the namespace it had standalone. parseEnvelope
 * removes that `xmlns=""` again from the payload text it hands out (standalone it is redundant), so
 * build -> parse returns the payload text unchanged. Envelopes written by hand without `xmlns=""`
 * are accepted: their payload is taken as if it had no namespace.
 */
import { XmlError } from '../errors.ts';
import { isOwnTraceparent } from '../telemetry/traceparent.ts';
import { checkSize, isNameCode, isNameStartCode, isSpaceCode } from './chars.ts';
import { escapeAttr, escapeText } from './codec.ts';
import type { XmlLimits } from './limits.ts';
import type { XmlNode } from './parse.ts';
import { parseXml, tooManyElements, withNoDefaultNamespace, type XmlElement } from './parser.ts';

export const ENVELOPE_NS = 'https://xml-pipeline.org/ns/envelope/v1';

export interface EnvelopeMeta {
  from: string;
  to?: string;
  /** Thread id. parseEnvelope gives '' when the envelope carries none (optional in the XSD). */
  thread: string;
  /**
   * W3C traceparent of the span that sent the message (tracing on), written as an extension element
   * `<traceparent xmlns="urn:organism:trace-context:1">` after `<thread>`: xml-pipeline peers skip
   * meta children in other namespaces, as the envelope XSD allows.
   */
  traceparent?: string;
}

export interface ParsedEnvelope extends EnvelopeMeta {
  /** Local name of the payload root element. */
  tag: string;
  /** The payload element's text, standalone (see the namespace note above). */
  payloadXml: string;
  node: XmlNode;
}

/**
 * The envelope's own elements (message, meta, from, to, thread, traceparent): allowed on top of
 * limits.maxElements, which bounds the payload alone.
 */
const ENVELOPE_ELEMENTS = 6;

const HEAD = '<message xmlns="' + ENVELOPE_NS + '"><meta><from>';
/** The namespace of the `<meta>` extension element carrying a message's W3C traceparent. */
export const TRACE_CONTEXT_NS = 'urn:organism:trace-context:1';
const TRACE_OPEN = '<traceparent xmlns="' + TRACE_CONTEXT_NS + '">';

/**
 * Builds an envelope around one payload element. `payloadXml` must be a single well-formed element
 * (as produced by encodePayload, parsePayload or repairPayloads); it is not re-parsed here.
 */
export function buildEnvelope(meta: EnvelopeMeta, payloadXml: string): string {
  if (payloadXml.charCodeAt(0) !== 60) {
    payloadXml = payloadXml.trim();
    if (payloadXml.charCodeAt(0) !== 60)
      throw new XmlError('xml.envelope', 'the payload must be one XML element');
  }
  // Concatenated, not joined (an array's join is ~4x slower at this size) and not flattened: in
  // memory the delivery finds this very string in lastBuilt and never reads its text; a transport
  // that writes it, or a parse that reads it, flattens it once then.
  const from = escaped.from.of(meta.from);
  const to = meta.to !== undefined && meta.to !== '' ? `<to>${escaped.to.of(meta.to)}</to>` : '';
  const thread = escaped.thread.of(meta.thread);
  const traceparent = meta.traceparent;
  const trace =
    traceparent === undefined
      ? ''
      : // A hop span's own (lower-case hex and dashes) needs no escaping; it differs in every message.
        TRACE_OPEN +
        (isOwnTraceparent(traceparent) ? traceparent : escaped.traceparent.of(traceparent)) +
        '</traceparent>';
  const detached = detachPayload(payloadXml);
  const envelope =
    HEAD +
    from +
    '</from>' +
    to +
    '<thread>' +
    thread +
    '</thread>' +
    trace +
    '</meta>' +
    detached +
    '</message>';
  // Remembered for the delivery that, in memory, parses it in the same call (parseEnvelopeOf).
  if (detached !== payloadXml) lastBuilt.set(envelope, meta, payloadXml);
  else lastBuilt.envelope = '';
  return envelope;
}

/**
 * escapeText of the value last escaped (one slot): consecutive envelopes mostly name the same
 * sender, target and thread, and the check for characters to escape is a regular expression run.
 */
class LastEscaped {
  #value = '';
  #escaped = '';

  of(value: string): string {
    if (value !== this.#value) {
      // Escaped first: a value escapeText refuses (it throws) leaves the slot as it was.
      const escaped = escapeText(value);
      this.#value = value;
      this.#escaped = escaped;
    }
    return this.#escaped;
  }
}

const escaped = {
  from: new LastEscaped(),
  to: new LastEscaped(),
  thread: new LastEscaped(),
  traceparent: new LastEscaped(),
};

/**
 * The envelope buildEnvelope wrote last, the meta it wrote it for and the payload it put in
 * (before `xmlns=""` was added to its root). One slot, overwritten by every build, no object per
 * message: in memory a message is delivered, and its envelope parsed, within the publish that
 * built it, so the parse finds it here and reads the payload as the caller gave it instead of
 * checking the known head character by character and parsing the added attribute back out.
 */
const lastBuilt = {
  envelope: '',
  from: '',
  to: undefined as string | undefined,
  thread: '',
  traceparent: undefined as string | undefined,
  payload: '',
  set(envelope: string, meta: EnvelopeMeta, payload: string): void {
    this.envelope = envelope;
    this.from = meta.from;
    this.to = meta.to === '' ? undefined : meta.to;
    this.thread = meta.thread;
    this.traceparent = meta.traceparent;
    this.payload = payload;
  },
};

/** Adds `xmlns=""` to the payload root unless it declares a default namespace itself. */
function detachPayload(xml: string): string {
  const nameEnd = rootNameEnd(xml);
  if (findRootAttribute(xml, nameEnd, 'xmlns') !== null) return xml;
  return xml.slice(0, nameEnd) + ' xmlns=""' + xml.slice(nameEnd);
}

function rootNameEnd(xml: string): number {
  let j = 1;
  while (j < xml.length && isNameCode(xml.charCodeAt(j))) j++;
  return j;
}

/** Span of attribute `name` (with its leading whitespace) in the root start tag, or null. */
function findRootAttribute(
  xml: string,
  from: number,
  name: string,
): { start: number; end: number; value: string } | null {
  const n = xml.length;
  let i = from;
  for (;;) {
    const start = i;
    while (i < n && isSpaceCode(xml.charCodeAt(i))) i++;
    const c = xml.charCodeAt(i);
    if (i >= n || c === 62 || c === 47) return null;
    const nameStart = i;
    while (i < n && isNameCode(xml.charCodeAt(i))) i++;
    const attr = xml.slice(nameStart, i);
    while (i < n && xml.charCodeAt(i) !== 34 && xml.charCodeAt(i) !== 39) i++;
    const close = xml.indexOf(xml[i]!, i + 1);
    if (close === -1 || i === nameStart) return null;
    if (attr === name) return { start, end: close + 1, value: xml.slice(i + 1, close) };
    i = close + 1;
  }
}

function envelopeError(message: string): never {
  throw new XmlError('xml.envelope', `not a valid envelope: ${message}`);
}

function hasNonSpace(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isSpaceCode(s.charCodeAt(i))) return true;
  return false;
}

/** Elements in `el`'s subtree, itself included. */
function subtreeSize(el: XmlElement): number {
  let n = 1;
  for (const child of el.children) n += subtreeSize(child);
  return n;
}

function metaText(el: XmlElement): string {
  if (el.children.length > 0) envelopeError(`<${el.local}> must hold text only`);
  return el.text.trim();
}

/**
 * Parses and checks an envelope: root `<message>` in the envelope namespace, `<meta>` with
 * `<from>` (required), `<to>` and `<thread>` (optional), then exactly one payload element. Meta
 * children in other namespaces are ignored (the XSD reserves them for extensions).
 */
export function parseEnvelope(text: string, limits: XmlLimits): ParsedEnvelope {
  const doc = parseXml(text, limits, false, ENVELOPE_ELEMENTS);
  const root = doc.roots[0]!;
  if (root.local !== 'message' || root.ns !== ENVELOPE_NS) {
    envelopeError(`the root element must be <message xmlns="${ENVELOPE_NS}">, got <${root.name}>`);
  }
  if (hasNonSpace(root.text)) envelopeError('text directly inside <message>');
  const kids = root.children;
  const meta = kids[0];
  if (meta === undefined || meta.local !== 'meta' || meta.ns !== ENVELOPE_NS) {
    envelopeError('<message> must start with <meta>');
  }
  if (kids.length < 2) envelopeError('<message> carries no payload element');
  if (kids.length > 2)
    envelopeError(`<message> carries ${kids.length - 1} payload elements; exactly one is allowed`);
  if (hasNonSpace(meta.text)) envelopeError('text directly inside <meta>');

  let from: string | undefined;
  let to: string | undefined;
  let thread: string | undefined;
  let traceparent: string | undefined;
  for (const field of meta.children) {
    if (field.ns !== ENVELOPE_NS) {
      // Extensions are skipped, as the XSD allows; the trace context is read when it is text.
      if (field.ns === TRACE_CONTEXT_NS && field.local === 'traceparent' && field.children.length === 0)
        traceparent ??= field.text.trim();
      continue;
    }
    const value = metaText(field);
    if (field.local === 'from' && from === undefined) from = value;
    else if (field.local === 'to' && to === undefined) to = value;
    else if (field.local === 'thread' && thread === undefined) thread = value;
    else envelopeError(`unexpected or repeated <${field.local}> in <meta>`);
  }
  if (from === undefined || from === '') envelopeError('<meta> has no <from>');
  // The slack given to the parse is for the envelope's own elements only: the payload alone is
  // held to maxElements, as it was when it was accepted.
  if (doc.elements - 1 - subtreeSize(meta) > limits.maxElements) tooManyElements(limits.maxElements);

  const payload = kids[1]!;
  let payloadXml = doc.text.slice(payload.start, payload.end);
  if (payload.attrs.xmlns === '') {
    const at = findRootAttribute(payloadXml, rootNameEnd(payloadXml), 'xmlns');
    if (at !== null) payloadXml = payloadXml.slice(0, at.start) + payloadXml.slice(at.end);
  }
  payloadXml = carryPrefixes(root, payload, payloadXml);

  const out: ParsedEnvelope = { from, thread: thread ?? '', tag: payload.local, payloadXml, node: payload };
  if (to !== undefined && to !== '') out.to = to;
  if (traceparent !== undefined) out.traceparent = traceparent;
  return out;
}

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
  let doc: ReturnType<typeof parseXml>;
  try {
    checkSize(text, limits);
    doc = parseXml(given, builtPayloadLimits(limits), false);
  } catch {
    return undefined;
  }
  const payload = doc.roots[0]!;
  // The root as the envelope has it: with the `xmlns=""` buildEnvelope wrote (none of its own).
  if (payload.attrs.xmlns !== undefined) return undefined;
  (payload as { attrs: XmlElement['attrs'] }).attrs = withNoDefaultNamespace(payload.attrs);
  const out: ParsedEnvelope = {
    from,
    thread,
    tag: payload.local,
    payloadXml: doc.text.slice(payload.start, payload.end),
    node: payload,
  };
  if (to !== undefined) out.to = to;
  if (traceparent !== undefined) out.traceparent = traceparent;
  return out;
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

/**
 * A payload may use prefixes declared on <message>; standalone it needs those declarations itself,
 * so they are copied onto the payload root (unless it redeclares them).
 */
function carryPrefixes(root: XmlElement, payload: XmlElement, xml: string): string {
  let extra = '';
  for (const key in root.attrs) {
    if (!key.startsWith('xmlns:') || payload.attrs[key] !== undefined) continue;
    extra += ` ${key}="${escapeAttr(root.attrs[key]!)}"`;
  }
  if (extra === '') return xml;
  const nameEnd = rootNameEnd(xml);
  return xml.slice(0, nameEnd) + extra + xml.slice(nameEnd);
}
