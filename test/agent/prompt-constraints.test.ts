/**
 * The agent's own system prompt tells the model every constraint its tools' and peers' arguments
 * are validated by, so a call is not refused for a format the model was never told.
 */
import { describe, expect, it } from 'vitest';
import { buildSystemPrompt } from '../../src/agent/prompt.ts';

describe('the functions an agent is offered, with their constraints', () => {
  it('says pattern, format, enum, bounds, lengths and list sizes beside each argument', () => {
    const prompt = buildSystemPrompt({
      name: 'booker',
      description: 'Books tables.',
      prompt: undefined,
      functions: [
        {
          kind: 'tell',
          target: 'tables',
          source: 'native',
          name: 'tell_tables',
          description: 'Reserve a table.',
          parameters: {
            type: 'object',
            properties: {
              zip: { type: 'string', pattern: '^[0-9]{5}$' },
              when: { type: 'string', format: 'date' },
              seating: { enum: ['inside', 'terrace'] },
              guests: { type: 'integer', minimum: 1, maximum: 12 },
              code: { type: 'string', minLength: 6, maxLength: 6 },
              notes: { type: 'array', items: { type: 'string', maxLength: 80 }, maxItems: 3 },
            },
            required: ['zip', 'when', 'guests'],
          },
        },
      ],
    });
    expect(prompt).toContain('    - zip (string, required; must match the regular expression ^[0-9]{5}$)');
    expect(prompt).toContain(
      '    - when (string, required; format date: a date, YYYY-MM-DD, e.g. 2024-05-01)',
    );
    expect(prompt).toContain('    - seating (one of "inside", "terrace", optional)');
    expect(prompt).toContain('    - guests (integer, required; from 1 to 12)');
    expect(prompt).toContain('    - code (string, optional; exactly 6 characters)');
    expect(prompt).toContain(
      '    - notes (list of string, optional; at most 3 items; each item: at most 80 characters)',
    );
  });
});
