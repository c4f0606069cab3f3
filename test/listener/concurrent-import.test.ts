/**
 * One handler module named by several listeners is loaded by all of them at once (a daemon starts
 * them together). Every one must get the whole module: a full suite run once failed a daemon with
 * "no default export" for both listeners of listeners/toolbox.ts, a half-written compiled file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importTypescriptModule, typescriptModuleStats } from '../../src/listener/typescript-module.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function moduleFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-concurrent-import-'));
  dirs.push(dir);
  const file = join(dir, 'big.ts');
  // Large enough that writing it is not one syscall.
  const filler = Array.from({ length: 4000 }, (_, i) => `export const v${i}: number = ${i};`).join('\n');
  await writeFile(file, `${filler}\nexport default { name: 'big' as const };\n`);
  return file;
}

describe('a TypeScript module loaded by several listeners at once', () => {
  it('gives every one the whole module, the same one (no cache folder: compiled per load)', async () => {
    const file = await moduleFile();
    const before = typescriptModuleStats().compiles;
    const loaded = await Promise.all(Array.from({ length: 12 }, () => importTypescriptModule(file)));
    // One compile and one output file: twelve compiles wrote one file over one another while the
    // first import read it.
    expect(typescriptModuleStats().compiles - before).toBe(1);
    for (const mod of loaded) expect(mod.default).toEqual({ name: 'big' });
    expect(new Set(loaded.map((m) => m.default)).size).toBe(1);
  });

  it('loads again after an edit once the first load is over', async () => {
    const file = await moduleFile();
    const first = await importTypescriptModule(file);
    await writeFile(file, "export default { name: 'edited' };\n");
    const before = typescriptModuleStats().compiles;
    const second = await importTypescriptModule(file);
    expect(typescriptModuleStats().compiles - before).toBe(1);
    expect(first.default).toEqual({ name: 'big' });
    expect(second.default).toEqual({ name: 'edited' });
  });
});
