import { definePrompt, imageContent, resourceContent } from 'organism';
import { RED_PIXEL_PNG } from '../lib/media.ts';

/** Words completion/complete offers for arg1 of test_prompt_with_arguments, by prefix. */
const WORDS = ['paris', 'park', 'party', 'hello', 'help'];

/** The suite's prompts (conformance: prompts-*, completion-complete), each with definePrompt. */
export default [
  definePrompt({
    name: 'test_simple_prompt',
    description: 'A prompt with no arguments (conformance: prompts-get-simple).',
    get: () => 'This is a simple prompt for testing.',
  }),
  definePrompt({
    name: 'test_prompt_with_arguments',
    description: 'A prompt built from two arguments (conformance: prompts-get-with-args).',
    arguments: [
      {
        name: 'arg1',
        description: 'First test argument',
        required: true,
        complete: (typed) => WORDS.filter((w) => w.startsWith(typed)),
      },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    get: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
  }),
  definePrompt({
    name: 'test_prompt_with_embedded_resource',
    description:
      'A prompt that embeds the resource it is given (conformance: prompts-get-embedded-resource).',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    get: ({ resourceUri }) => [
      {
        role: 'user',
        content: resourceContent({
          uri: resourceUri ?? '',
          mimeType: 'text/plain',
          text: 'Embedded resource content for testing.',
        }),
      },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  }),
  definePrompt({
    name: 'test_prompt_with_image',
    description: 'A prompt with an image (conformance: prompts-get-with-image).',
    get: () => [
      { role: 'user', content: imageContent(Buffer.from(RED_PIXEL_PNG, 'base64'), 'image/png') },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }),
];
