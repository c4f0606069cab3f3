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

/** The conformance suite's JSON Schema 2020-12 input schema: offered as written, and checked by it. */
export const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, not a promise
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const;

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
  {
    name: 'contact',
    description: 'Takes a contact by a JSON Schema 2020-12 input schema.',
    args: SCHEMA_2020_12,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async (args: unknown) => ({ received: args }),
  },
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
