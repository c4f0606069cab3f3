/**
 * Content blocks read as text: what an agent's model is shown (its tool message), what the thread
 * history keeps and an agent resuming from it reads back (the same text), and a result over
 * max_result_bytes. Binary parts are described, never inlined or cut.
 */
import { describe, expect, it } from 'vitest';
import { frameToolResult } from '../../src/agent/frame.ts';
import { decodeToolResult } from '../../src/agent/record.ts';
import { toolResultXml } from '../../src/bus/tool-calls.ts';
import {
  audioContent,
  imageContent,
  resourceContent,
  resourceLinkContent,
  textContent,
  toolContent,
} from '../../src/index.ts';
import { checkContent, isToolContent } from '../../src/tools/content.ts';
import { capResult } from '../../src/tools/result-cap.ts';
import type { ToolResult } from '../../src/tools/types.ts';

const image = imageContent(new Uint8Array(1200), 'image/png');
const mixed = toolContent(
  [
    textContent('a chart:'),
    image,
    audioContent(new Uint8Array(10), 'audio/wav'),
    resourceContent({ uri: 'test://doc', mimeType: 'text/plain', text: 'the doc' }),
    resourceContent({ uri: 'test://bin', blob: new Uint8Array(3) }),
    resourceLinkContent({ uri: 'test://more', name: 'more' }),
  ],
  { value: { points: 12 } },
);

describe('content blocks as text', () => {
  it("the model's tool message: text as written, binary described, the value as JSON", () => {
    const framed = frameToolResult(
      'c1',
      'chart',
      { status: 'ok', tool: 'chart', value: mixed },
      'native',
      10_000,
    );
    expect(framed.content).toContain(
      [
        'a chart:',
        '[image image/png, 1.2 kB]',
        '[audio audio/wav, 10 B]',
        '[resource test://doc text/plain]\nthe doc',
        '[resource test://bin, 3 B]',
        '[resource link test://more "more"]',
        '{"points":12}',
      ].join('\n\n'),
    );
    expect(framed.content).not.toContain(image.data.slice(0, 40));
  });

  it('the thread history keeps the described form, and a resumed agent is shown the same text', () => {
    const result: ToolResult = { status: 'ok', tool: 'chart', value: mixed };
    const xml = toolResultXml(result);
    expect(xml).toContain('[image image/png, 1.2 kB]');
    expect(xml).not.toContain(image.data.slice(0, 40));
    const payload = /<tool-result[\s\S]*<\/tool-result>/.exec(xml)?.[0] ?? xml;
    const resumed = decodeToolResult(payload, 'chart');
    expect(isToolContent((resumed as { value: unknown }).value)).toBe(true);
    const now = frameToolResult('c1', 'chart', result, 'native', 10_000).content;
    expect(frameToolResult('c1', 'chart', resumed, 'native', 10_000).content).toBe(now);
  });

  it('over max_result_bytes (its base64 counted) the result is the text form, cut, with the marker', () => {
    const capped = capResult(mixed, 300);
    expect(capped.truncated?.original_bytes).toBeGreaterThan(1600);
    expect(capped.value).toMatch(/^a chart:\n\n\[image image\/png, 1\.2 kB\]/);
    expect(capped.value).toContain('[truncated: result was');
    expect(Buffer.byteLength(capped.value as string)).toBeLessThanOrEqual(300);
    // Under the cap it is left as it is.
    expect(capResult(mixed, 100_000).value).toBe(mixed);
  });

  it('checks name the block that is not well formed', () => {
    expect(checkContent(mixed)).toBeNull();
    expect(checkContent({ '~content': [textContent('ok'), { type: 'video' } as never] })).toBe(
      'content[1].type is "video"; one of text, image, audio, resource, resource_link',
    );
    expect(checkContent({ '~content': [{ type: 'image', data: 'abc', mimeType: 'image/png' }] })).toMatch(
      /content\[0\]\.data is not base64/,
    );
    expect(checkContent({ '~content': [{ type: 'resource', resource: { uri: 'x:y' } } as never] })).toBe(
      'content[0].resource has neither text nor blob',
    );
    // An ordinary value with a `content` key is no content result.
    expect(isToolContent({ content: 'file text' })).toBe(false);
  });
});
