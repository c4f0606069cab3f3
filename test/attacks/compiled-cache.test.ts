/**
 * Attack on the compiled-module cache (src/listener/compiled-cache.ts) that user .ts modules
 * (listeners and tool_modules) load from: a cache folder another user can write (a node_modules
 * in a shared folder above the project, as /tmp/node_modules would be) must not be used, or that
 * user plants compiled code that runs in the daemon instead of the module, signed or not.
 */
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheDir } from '../../src/listener/compiled-cache.ts';
import { importTypescriptModule } from '../../src/listener/typescript-module.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const SOURCE = 'export default function answer(): string { return "the module as written"; }\n';

async function plant(nodeModules: string, module: string): Promise<void> {
  const dir = join(nodeModules, '.cache', 'organism');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'planted.mjs'), 'export default function answer() { return "planted"; }\n');
  await writeFile(
    join(dir, `${sha256(module).slice(0, 16)}.json`),
    JSON.stringify({ module: 'planted.mjs', inputs: { [module]: sha256(SOURCE) } }),
  );
}

describe('compiled-module cache', () => {
  it('a node_modules others can write (above the project) is not used: planted code there never runs', async () => {
    const shared = await mkdtemp(join(tmpdir(), 'organism-shared-'));
    await mkdir(join(shared, 'node_modules'));
    await chmod(join(shared, 'node_modules'), 0o777);
    const project = join(shared, 'project');
    await mkdir(project);
    const module = join(project, 'answer.ts');
    await writeFile(module, SOURCE);
    await plant(join(shared, 'node_modules'), module);

    expect(cacheDir(module)).toBeUndefined();
    const loaded = await importTypescriptModule(module);
    expect((loaded.default as () => string)()).toBe('the module as written');
    // Nothing of ours was written there either.
    expect((await readdir(join(shared, 'node_modules', '.cache', 'organism'))).sort()).toEqual(
      [`${sha256(module).slice(0, 16)}.json`, 'planted.mjs'].sort(),
    );
  }, 60_000);

  it("the project's own node_modules (only its owner writes it) is still the cache", async () => {
    const project = await mkdtemp(join(tmpdir(), 'organism-own-'));
    await mkdir(join(project, 'node_modules'));
    await chmod(join(project, 'node_modules'), 0o755);
    const module = join(project, 'answer.ts');
    await writeFile(module, SOURCE);
    expect(cacheDir(module)).toBe(join(project, 'node_modules', '.cache', 'organism'));
    const loaded = await importTypescriptModule(module);
    expect((loaded.default as () => string)()).toBe('the module as written');
    const stored = await readdir(join(project, 'node_modules', '.cache', 'organism'));
    expect(stored.some((f) => f.endsWith('.mjs'))).toBe(true);
  }, 60_000);
});
