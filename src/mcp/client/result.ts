/**
 * A CallToolResult as a tool result: `structuredContent` when the server gives it, else the text
 * of its text blocks; images, audio and embedded resources are described, not inlined (their bytes
 * would only fill the result cap). `isError` becomes a tool failure the agent can read.
 */
import { McpError } from '../../errors.ts';

interface Block {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

export interface CallResult {
  content?: Block[];
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
}

export function resultValue(result: CallResult): unknown {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const text = blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
  if (result.isError) throw new McpError('mcp.tool', text || 'the MCP server reported an error without text');
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (result.toolResult !== undefined) return result.toolResult;
  const others = blocks.filter((b) => b.type !== 'text').map(describe);
  if (others.length === 0) return { text };
  return { text, content: others };
}

function describe(block: Block): Record<string, unknown> {
  if (block.type === 'image' || block.type === 'audio')
    return {
      type: block.type,
      mimeType: block.mimeType,
      bytes: Math.floor(((block.data ?? '').length * 3) / 4),
    };
  if (block.type === 'resource') {
    const r = block.resource ?? {};
    return {
      type: 'resource',
      uri: r.uri,
      mimeType: r.mimeType,
      ...(typeof r.text === 'string' ? { text: r.text } : {}),
    };
  }
  if (block.type === 'resource_link') return { type: 'resource_link', uri: block.uri };
  return { type: block.type };
}
