/**
 * README "Testing your listeners": its examples, run as written against this checkout (the import
 * of 'organism' and 'organism/testing' pointed at src/). test/e2e/package.test.ts runs the same
 * files in a project made by `organism init` from the packed package.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readmeExamples } from '../helpers/readme-examples.ts';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const IMPORTS: Record<string, string> = {
  organism: join(SRC, 'index.ts'),
  'organism/testing': join(SRC, 'testing/index.ts'),
  vitest: fileURLToPath(import.meta.resolve('vitest')),
};

const examples = await readmeExamples();
const dir = await mkdtemp(join(tmpdir(), 'organism-readme-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

it('README marks its testing examples to be run here', () => {
  expect(examples.map((e) => e.file)).toContain('test/triage.test.ts');
});

for (const example of examples) {
  const file = join(dir, basename(example.file));
  const code = example.code.replaceAll(/from '(organism(?:\/testing)?|vitest)'/g, (_, name: string) => {
    return `from '${IMPORTS[name]}'`;
  });
  await writeFile(file, code);
  describe(`README: ${example.file}`, async () => {
    await import(pathToFileURL(file).href);
  });
}
