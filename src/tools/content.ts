/**
 * Tool results richer than one JSON value: content blocks (text, image, audio, an embedded resource,
 * a link to a resource), in the shapes MCP gives them, so the MCP server hands them on unchanged.
 * A tool returns `toolContent([...])`; the mark is the `~content` key (like Standard Schema's
 * `~standard`), plain data, so the result survives JSON (the effects store, the API, another
 * daemon) and no ordinary value (`{ content: ... }`, read_file's result) is taken for one.
 *
 * Where a result is read as text (thread history, an LLM's tool message, a result over
 * max_result_bytes) binary blocks are described, never inlined: "[image image/png, 1.2 kB]".
 */

export interface TextBlock {
  type: 'text';
  text: string;
}
export interface ImageBlock {
  type: 'image';
  /** Base64. */
  data: string;
  mimeType: string;
}
export interface AudioBlock {
  type: 'audio';
  /** Base64. */
  data: string;
  mimeType: string;
}
export type EmbeddedResource =
  | { uri: string; mimeType?: string; text: string }
  | { uri: string; mimeType?: string; blob: string };
export interface ResourceBlock {
  type: 'resource';
  resource: EmbeddedResource;
}
export interface ResourceLinkBlock {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType?: string;
  description?: string;
}
export type ContentBlock = TextBlock | ImageBlock | AudioBlock | ResourceBlock | ResourceLinkBlock;

export const CONTENT_KEY = '~content';

/** What a tool returns to give content blocks; `value`, when set, is also given as plain data. */
export interface ToolContent<V = unknown> {
  readonly '~content': ContentBlock[];
  readonly value?: V;
}

type Bytes = Uint8Array | ArrayBuffer | string;

/** Bytes (a Buffer, Uint8Array, ArrayBuffer) as base64; a string is taken as base64 already. */
function base64(data: Bytes): string {
  if (typeof data === 'string') return data;
  const view = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
}

export function textContent(text: string): TextBlock {
  return { type: 'text', text };
}

/** An image: bytes, or base64 text. */
export function imageContent(data: Bytes, mimeType: string): ImageBlock {
  return { type: 'image', data: base64(data), mimeType };
}

/** A sound: bytes, or base64 text. */
export function audioContent(data: Bytes, mimeType: string): AudioBlock {
  return { type: 'audio', data: base64(data), mimeType };
}

/** A resource's contents inline: `text`, or `blob` (bytes, or base64 text). */
export function resourceContent(
  resource: { uri: string; mimeType?: string } & ({ text: string } | { blob: Bytes }),
): ResourceBlock {
  const head = { uri: resource.uri, ...(resource.mimeType ? { mimeType: resource.mimeType } : {}) };
  return {
    type: 'resource',
    resource:
      'text' in resource ? { ...head, text: resource.text } : { ...head, blob: base64(resource.blob) },
  };
}

/** A pointer to a resource the client may read (resources/read), not its contents. */
export function resourceLinkContent(link: Omit<ResourceLinkBlock, 'type'>): ResourceLinkBlock {
  return { type: 'resource_link', ...link };
}

/** A tool's result as content blocks; `options.value` adds a plain value (MCP's structuredContent). */
export function toolContent<V = undefined>(
  blocks: ContentBlock | readonly ContentBlock[],
  options: { value?: V } = {},
): ToolContent<V> {
  const list = Array.isArray(blocks) ? [...blocks] : [blocks as ContentBlock];
  return 'value' in options && options.value !== undefined
    ? { [CONTENT_KEY]: list, value: options.value as V }
    : { [CONTENT_KEY]: list };
}

/** Marked as content (checkContent says whether the blocks are well formed). */
export function isToolContent(value: unknown): value is ToolContent {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Array.isArray((value as Record<string, unknown>)[CONTENT_KEY])
  );
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What is wrong with one block, with its place (`content[2].mimeType ...`), or null. */
export function checkBlock(block: unknown, at: string): string | null {
  if (typeof block !== 'object' || block === null) return `${at} is not an object`;
  const b = block as Record<string, unknown>;
  const str = (key: string, o: Record<string, unknown> = b, where = at) =>
    typeof o[key] === 'string' ? null : `${where}.${key} must be a string`;
  const b64 = (key: string, o: Record<string, unknown>, where: string) =>
    str(key, o, where) ??
    (BASE64.test(o[key] as string) && (o[key] as string).length % 4 === 0
      ? null
      : `${where}.${key} is not base64 (give bytes to the helper, or base64 text)`);
  switch (b.type) {
    case 'text':
      return str('text');
    case 'image':
    case 'audio':
      return str('mimeType') ?? b64('data', b, at);
    case 'resource': {
      const r = b.resource;
      if (typeof r !== 'object' || r === null) return `${at}.resource is not an object`;
      const res = r as Record<string, unknown>;
      const where = `${at}.resource`;
      const uri = str('uri', res, where);
      if (uri) return uri;
      if (res.mimeType !== undefined && typeof res.mimeType !== 'string')
        return `${where}.mimeType must be a string`;
      if ('text' in res) return str('text', res, where);
      if ('blob' in res) return b64('blob', res, where);
      return `${where} has neither text nor blob`;
    }
    case 'resource_link':
      return str('uri') ?? str('name');
    default:
      return `${at}.type is ${JSON.stringify(b.type)}; one of text, image, audio, resource, resource_link`;
  }
}

/** What is wrong with a content result, or null. */
export function checkContent(value: ToolContent): string | null {
  const blocks = value[CONTENT_KEY];
  for (let i = 0; i < blocks.length; i++) {
    const wrong = checkBlock(blocks[i], `content[${i}]`);
    if (wrong) return wrong;
  }
  return null;
}

/** Decoded size of base64 text. */
function decodedBytes(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.max(0, (b64.length / 4) * 3 - pad);
}

export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)} kB`;
  return `${(n / 1_000_000).toFixed(1)} MB`;
}

/** One block as text: text as itself, binary described ("[image image/png, 1.2 kB]"). */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${formatBytes(decodedBytes(block.data))}]`;
    case 'resource': {
      const r = block.resource;
      const head = `${r.uri}${r.mimeType ? ` ${r.mimeType}` : ''}`;
      return 'text' in r
        ? `[resource ${head}]\n${r.text}`
        : `[resource ${head}, ${formatBytes(decodedBytes(r.blob))}]`;
    }
    case 'resource_link':
      return `[resource link ${block.uri} "${block.name}"${block.mimeType ? ` ${block.mimeType}` : ''}]`;
  }
}

/**
 * The same result with every binary block replaced by its description (a text block): what the
 * thread history keeps and an agent resuming from it reads, so it is what the model saw.
 */
export function describeContent(value: ToolContent): ToolContent {
  const blocks = value[CONTENT_KEY].map(
    (b): ContentBlock =>
      b.type === 'image' || b.type === 'audio' || (b.type === 'resource' && 'blob' in b.resource)
        ? { type: 'text', text: blockText(b) }
        : b,
  );
  return value.value === undefined
    ? { [CONTENT_KEY]: blocks }
    : { [CONTENT_KEY]: blocks, value: value.value };
}

/** The whole result as text: the blocks one per paragraph, then the value as JSON, if any. */
export function contentText(value: ToolContent): string {
  const parts = value[CONTENT_KEY].map(blockText);
  if (value.value !== undefined) parts.push(JSON.stringify(value.value) ?? 'null');
  return parts.join('\n\n');
}
