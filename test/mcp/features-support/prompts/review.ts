import { definePrompt, imageContent, resourceContent } from '../../../../src/index.ts';
import { PNG } from '../tools/media.ts';

const LANGUAGES = ['typescript', 'python', 'rust', 'ruby'];

export default [
  definePrompt({
    name: 'review',
    description: 'Ask for a code review.',
    arguments: [
      {
        name: 'language',
        description: 'The language',
        required: true,
        complete: (v) => LANGUAGES.filter((l) => l.startsWith(v)),
      },
      { name: 'focus', description: 'What to look at' },
    ],
    get: (args) => `Review this ${args.language} code${args.focus ? `, looking at ${args.focus}` : ''}.`,
  }),
  definePrompt({
    name: 'picture',
    description: 'An image and an embedded resource.',
    get: () => [
      { role: 'user', content: imageContent(PNG, 'image/png') },
      {
        role: 'user',
        content: resourceContent({ uri: 'test://doc', mimeType: 'text/plain', text: 'the doc' }),
      },
      { role: 'assistant', content: { type: 'text', text: 'I see it.' } },
    ],
  }),
  definePrompt({
    name: 'broken',
    description: 'Returns something that is no message.',
    get: () => [{ role: 'system', content: { type: 'text', text: 'x' } }] as never,
  }),
  definePrompt({
    name: 'throws',
    description: 'Fails.',
    get: () => {
      throw new Error('the prompt could not be built');
    },
  }),
];
