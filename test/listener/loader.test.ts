import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListenerLoadError } from '../../src/errors.ts';
import { loadListenerModule } from '../../src/listener/loader.ts';
import { isListenerDefinition } from '../../src/listener/types.ts';

const LISTENERS = fileURLToPath(new URL('../fixtures/config/listeners/', import.meta.url));
const TYPES_URL = pathToFileURL(fileURLToPath(new URL('../../src/listener/types.ts', import.meta.url))).href;

async function failure(path: string): Promise<ListenerLoadError> {
  const error = await loadListenerModule(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ListenerLoadError);
  expect((error as ListenerLoadError).code).toBe('listener.load');
  return error as ListenerLoadError;
}

describe('loadListenerModule', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'organism-loader-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a TypeScript module made with defineListener', async () => {
    const definition = await loadListenerModule(join(LISTENERS, 'echo.ts'));
    expect(isListenerDefinition(definition)).toBe(true);
    expect(definition.payload.tag).toBe('echo');
    expect(definition.description).toBe('Echoes text back to the caller.');
  });

  it('loads a JavaScript module', async () => {
    const path = join(dir, 'js-listener.mjs');
    await writeFile(
      path,
      `import { defineListener } from ${JSON.stringify(TYPES_URL)};
export default defineListener({ description: 'From JS.', payload: { tag: 'js', schema: { type: 'object' } }, handler: () => undefined });
`,
    );
    const definition = await loadListenerModule(path);
    expect(definition.payload.tag).toBe('js');
  });

  it('a missing file', async () => {
    const path = join(LISTENERS, 'missing.ts');
    const error = await failure(path);
    expect(error.message).toBe(`cannot load listener module ${path}: file not found`);
    expect(error.details).toEqual({ module: path });
  });

  it('a folder instead of a file', async () => {
    expect((await failure(LISTENERS)).message).toMatch(/: not a file$/);
  });

  it("a module that throws at import, with the module's own message", async () => {
    const error = await failure(join(LISTENERS, 'throws.ts'));
    expect(error.message).toMatch(
      /: import failed: fixture refuses to load: ORGANISM_FIXTURE_NEVER_SET is not set$/,
    );
    expect((error.cause as Error).message).toContain('ORGANISM_FIXTURE_NEVER_SET');
  });

  it('a module with a syntax error', async () => {
    const path = join(dir, 'syntax.mjs');
    await writeFile(path, 'export default defineListener({ payload: \n');
    expect((await failure(path)).message).toMatch(/: import failed: \S+/);
  });

  it('a default export not made by defineListener', async () => {
    const error = await failure(join(LISTENERS, 'not-a-listener.ts'));
    expect(error.message).toMatch(
      /: the default export \(a plain object\) was not made by defineListener; write `export default defineListener\(\{ \.\.\. \}\)`$/,
    );
  });

  it('no default export', async () => {
    const error = await failure(join(LISTENERS, 'no-default.ts'));
    expect(error.message).toMatch(
      /: no default export; write `export default defineListener\(\{ \.\.\. \}\)`$/,
    );
  });

  it('a definition without a payload tag', async () => {
    const path = join(dir, 'no-tag.mjs');
    await writeFile(
      path,
      `import { defineListener } from ${JSON.stringify(TYPES_URL)};
export default defineListener({ payload: { schema: {} }, handler: () => undefined });
`,
    );
    expect((await failure(path)).message).toMatch(/needs a non-empty tag$/);
  });
});
