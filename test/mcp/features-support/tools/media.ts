/** Own tools returning content blocks, built with the package's helpers. */
import {
  audioContent,
  defineTool,
  imageContent,
  resourceContent,
  resourceLinkContent,
  textContent,
  toolContent,
} from '../../../../src/index.ts';

/** A 1x1 PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);

const none = { type: 'object', properties: {}, additionalProperties: false } as const;

export default [
  defineTool({
    name: 'media_image',
    description: 'Returns a 1x1 PNG.',
    args: none,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async () => toolContent(imageContent(PNG, 'image/png')),
  }),
  defineTool({
    name: 'media_mixed',
    description: 'Text, audio, an embedded resource, a link, and a plain value.',
    args: none,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async () =>
      toolContent(
        [
          textContent(`the key is ${process.env.MEDIA_SECRET ?? 'unset'}`),
          audioContent(new Uint8Array([82, 73, 70, 70, 0, 0, 0, 0]), 'audio/wav'),
          resourceContent({ uri: 'test://doc', mimeType: 'application/json', text: '{"a":1}' }),
          resourceLinkContent({ uri: 'test://static-text', name: 'static text' }),
        ],
        { value: { count: 4 } },
      ),
  }),
  defineTool({
    name: 'media_big',
    description: 'An image of 64 kB, over a small max_result_bytes.',
    args: none,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async () => toolContent([textContent('big one'), imageContent(new Uint8Array(65536), 'image/png')]),
  }),
  defineTool({
    name: 'media_broken',
    description: 'Content that is not well formed.',
    args: none,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async () => ({ '~content': [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }] }),
  }),
];
