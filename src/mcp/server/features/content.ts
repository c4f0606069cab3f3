/**
 * Content blocks on their way to an MCP client. Text parts carry no secret the daemon knows
 * (invariant 7), redacted as a tool's text result always was; binary parts are passed as they are
 * (pattern redaction of base64 would only break the image, and a secret inside one is not found).
 */
import { redactKnown } from '../../../audit/redact.ts';
import type { ContentBlock } from '../../../tools/content.ts';

export function redactBlock(block: ContentBlock): ContentBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: redactKnown(block.text) };
    case 'resource':
      return 'text' in block.resource
        ? { type: 'resource', resource: { ...block.resource, text: redactKnown(block.resource.text) } }
        : block;
    case 'resource_link':
      return redactKnown(block);
    default:
      return block;
  }
}
