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
import { isNameCode, isSpaceCode } from './chars.ts';
import { escapeAttr, escapeText } from './codec.ts';
import type { EncodedTwin } from './encoded-twin.ts';
import type { XmlLimits } from './limits.ts';
import type { XmlNode } from './parse.ts';
import { parseXml, tooManyElements, type XmlElement } from './parser.ts';

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
  /** The payload decoded already, when it is what this process just encoded (see payloadValue). */
  encoded?: EncodedTwin;
}

/**
 * The envelope's own elements (message, meta, from, to, thread, traceparent): allowed on top of
 * limits.maxElements, which bounds the payload alone.
 */
const ENVELOPE_ELEMENTS = 6;

export const HEAD = '<message xmlns="' + ENVELOPE_NS + '"><meta><from>';
/** The namespace of the `<meta>` extension element carrying a message's W3C traceparent. */
export const TRACE_CONTEXT_NS = 'urn:organism:trace-context:1';
export const TRACE_OPEN = '<traceparent xmlns="' + TRACE_CONTEXT_NS + '">';

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
export const lastBuilt = {
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

export function rootNameEnd(xml: string): number {
  let j = 1;
  while (j < xml.length && isNameCode(xml.charCodeAt(j))) j++;
  return j;
}

/** Span of attribute `name` (with its leading whitespace) in the root start tag, or null. */
export function findRootAttribute(
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
