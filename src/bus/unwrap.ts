/**
 * Input that is itself a whole envelope. Its `<from>` and `<thread>` are the writer's claim, and the
 * runtime owns identity (invariant 2), so they are dropped; the payload is kept, and `<to>` is kept
 * as an address (still subject to peers). A handler or caller that copies an envelope it saw thus
 * gets the same treatment as one that sends the bare payload.
 */
import { ENVELOPE_NS, parseEnvelope } from '../xml/envelope.ts';
import type { XmlLimits } from '../xml/limits.ts';

export interface Unwrapped {
  payloadXml: string;
  to: string | undefined;
}

/** The payload and `<to>` of `xml` when it is an envelope, else undefined. Throws XmlError when it is a broken one. */
export function unwrapEnvelope(
  xml: string,
  tag: string,
  ns: string | undefined,
  limits: XmlLimits,
): Unwrapped | undefined {
  if (tag !== 'message') return undefined;
  if (ns !== undefined ? ns !== ENVELOPE_NS : !xml.includes(ENVELOPE_NS)) return undefined;
  const envelope = parseEnvelope(xml, limits);
  return { payloadXml: envelope.payloadXml, to: envelope.to || undefined };
}
