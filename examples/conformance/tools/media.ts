import { audioContent, defineTool, imageContent, resourceContent, textContent, toolContent } from 'organism';
import { RED_PIXEL_PNG, silentWav } from '../lib/media.ts';

const noArgs = { type: 'object', properties: {}, additionalProperties: false } as const;
const common = { args: noArgs, readOnly: true, capability: 'read', source: 'native' } as const;

/** Tool results richer than text: toolContent() with image, audio and embedded-resource blocks. */
export default [
  defineTool({
    ...common,
    name: 'test_image_content',
    description: 'Returns a 1x1 red PNG as image content (conformance: tools-call-image).',
    run: async () => toolContent(imageContent(Buffer.from(RED_PIXEL_PNG, 'base64'), 'image/png')),
  }),
  defineTool({
    ...common,
    name: 'test_audio_content',
    description:
      'Returns a tenth of a second of silence as WAV audio content (conformance: tools-call-audio).',
    run: async () => toolContent(audioContent(silentWav(), 'audio/wav')),
  }),
  defineTool({
    ...common,
    name: 'test_embedded_resource',
    description:
      'Returns a text resource embedded in the result (conformance: tools-call-embedded-resource).',
    run: async () =>
      toolContent(
        resourceContent({
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        }),
      ),
  }),
  defineTool({
    ...common,
    name: 'test_multiple_content_types',
    description:
      'Returns text, an image and an embedded JSON resource in one result (conformance: tools-call-mixed-content).',
    run: async () =>
      toolContent([
        textContent('Multiple content types test:'),
        imageContent(Buffer.from(RED_PIXEL_PNG, 'base64'), 'image/png'),
        resourceContent({
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        }),
      ]),
  }),
];
