/** The XML layer: parsing with limits, the envelope, repair, the schema codec, validation, descriptions. */
export { decodePayload, encodePayload, escapeAttr, escapeText } from './codec.ts';
export { schemaToExample, schemaToPrompt } from './describe.ts';
export {
  buildEnvelope,
  ENVELOPE_NS,
  type EnvelopeMeta,
  type ParsedEnvelope,
  parseEnvelope,
} from './envelope.ts';
export { DEFAULT_XML_LIMITS, type XmlLimits, xmlLimits } from './limits.ts';
export { decodeUtf8Strict, type ParsedPayload, parsePayload, type XmlNode } from './parse.ts';
export { repairPayloads } from './repair.ts';
export { compileValidator, type PayloadValidator } from './validate.ts';
export { schemaToXsd } from './xsd.ts';
