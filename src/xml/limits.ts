/**
 * Bounds every XML parse in Organism applies (invariant 5). One object, defaults in one place; the
 * bus builds its own from organism.yaml `limits:` and passes it to every parse call.
 */
export interface XmlLimits {
  /** Maximum UTF-8 byte length of one document (envelope or payload text). */
  maxBytes: number;
  /** Maximum element nesting depth; the root element is depth 1. */
  maxDepth: number;
  /** Maximum attributes on one element (namespace declarations count). */
  maxAttributes: number;
  /** Maximum characters of text directly inside one element, and of one attribute value. */
  maxTextLength: number;
  /**
   * Maximum elements in one document (the root included). Parsing costs time per element on the
   * event loop, so a document of a million empty elements within maxBytes would stall the daemon;
   * this bound stops the parse early instead.
   */
  maxElements: number;
}

export const DEFAULT_XML_LIMITS: XmlLimits = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 64,
  maxAttributes: 64,
  maxTextLength: 1024 * 1024,
  maxElements: 10_000,
});

/** Fills gaps in a partial limits object from the defaults and checks each is a positive integer. */
export function xmlLimits(partial: Partial<XmlLimits> = {}): XmlLimits {
  const limits = { ...DEFAULT_XML_LIMITS, ...partial };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`XML limit ${key} must be a positive integer, got ${String(value)}`);
    }
  }
  return limits;
}
