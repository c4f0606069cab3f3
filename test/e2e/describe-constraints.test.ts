/**
 * `organism describe` on a user's listener keeps every constraint of its payload schema: the XSD it
 * prints has the facets (checked by xmllint, a real XSD validator) and the prompt fragment says
 * each constraint in words.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/daemon.ts';
import { xmllintValidate } from '../helpers/xmllint.ts';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 40 },
    guests: { type: 'integer', minimum: 1, maximum: 12 },
    when: { type: 'string', format: 'date-time' },
    seating: { enum: ['inside', 'terrace'] },
    zip: { type: 'string', pattern: '^\\d{5}$' },
    tip: { type: 'number', minimum: 0, multipleOf: 0.01 },
    notes: { type: 'array', items: { type: 'string' }, maxItems: 3 },
  },
  required: ['name', 'guests', 'when', 'zip'],
  additionalProperties: false,
};

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-describe-'));
  await writeFile(
    join(dir, 'booker.ts'),
    [
      `import { defineListener } from '${join(REPO_ROOT, 'src/index.ts')}';`,
      'export default defineListener({',
      "  description: 'Books tables.',",
      `  payload: { tag: 'book-table', schema: ${JSON.stringify(SCHEMA)} },`,
      '  handler: () => undefined,',
      '});',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'organism.yaml'),
    'organism:\n  name: describing\nlisteners:\n  - name: booker\n    handler: ./booker.ts\n',
  );
  return join(dir, 'organism.yaml');
}

describe('organism describe keeps every constraint', () => {
  it('prints an XSD with the facets xmllint enforces, and a prompt that says each constraint', async () => {
    const config = await project();
    const { code, stdout, stderr } = await runCli(['describe', 'booker', '--config', config]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const xsd = /## XSD\n([\s\S]*?)\n\n## Example/.exec(stdout)?.[1] ?? '';
    const example = /## Example\n([\s\S]*?)\n\n## Prompt/.exec(stdout)?.[1] ?? '';
    const prompt = stdout.slice(stdout.indexOf('## Prompt'));

    expect(xsd).toContain('<xs:pattern value="[0-9]{5}"/>');
    expect(xsd).toContain('<xs:enumeration value="terrace"/>');
    expect(xsd).toContain('<xs:maxInclusive value="12"/>');
    expect(xsd).toContain('<xs:maxLength value="40"/>');
    expect(xsd).toContain('<xs:fractionDigits value="2"/>');
    expect(xsd).toContain('<xs:restriction base="xs:dateTime">');
    expect(xsd).toMatch(/<xs:element name="notes" minOccurs="0" maxOccurs="3"[ >]/);

    expect(prompt).toContain('- <name> (string, required; 1 to 40 characters)');
    expect(prompt).toContain('- <guests> (integer, required; from 1 to 12)');
    expect(prompt).toContain(
      '- <when> (string, required; format date-time: a date and time with a time zone',
    );
    expect(prompt).toContain('- <seating> (one of "inside", "terrace", optional)');
    expect(prompt).toContain('- <zip> (string, required; must match the regular expression ^\\d{5}$)');
    expect(prompt).toContain('- <tip> (number, optional; at least 0; a multiple of 0.01)');
    expect(prompt).toContain(
      '- <notes> (list of string; repeat <notes> once per item, optional; at most 3 items)',
    );

    const wrongZip = example.replace(/<zip>[^<]*<\/zip>/, '<zip>1011</zip>');
    const tooMany = example.replace('<guests>1</guests>', '<guests>13</guests>');
    const check = xmllintValidate(xsd, [example, wrongZip, tooMany]);
    expect(check.schemaErrors).toBe('');
    expect(check.valid, check.messages).toEqual([true, false, false]);
  });
});
