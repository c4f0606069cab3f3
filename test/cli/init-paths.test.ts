/**
 * `organism init` checks every path before the first write (test/cli/init.test.ts); these are the
 * writes themselves when a link appears between that check and the write: they neither follow it
 * nor write outside.
 */
import {
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPlan, makeFolders, writeProjectFile } from '../../src/cli/init/paths.ts';

const tempDir = async () => realpath(await mkdtemp(join(tmpdir(), 'organism-init-paths-')));
const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

describe('init writes, with a link made after the check', () => {
  it('does not create a new file through a link that appeared at its path', async () => {
    const root = await tempDir();
    const plan = await checkPlan(root, ['organism.yaml']);
    expect(plan.existing.size).toBe(0);
    await symlink(join(root, 'outside.yaml'), join(root, 'organism.yaml'));
    await expect(writeProjectFile(plan, 'organism.yaml', 'x', root)).rejects.toMatchObject({
      code: 'init.unsafe_path',
      message: expect.stringContaining(`${join(root, 'organism.yaml')} appeared or changed while init ran`),
    });
    expect(await exists(join(root, 'outside.yaml'))).toBe(false);
  });

  it('replaces (does not write through) an existing file that became a link', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'package.json'), '{}\n');
    const plan = await checkPlan(root, ['package.json']);
    expect([...plan.existing]).toEqual(['package.json']);
    await writeFile(join(root, 'victim.json'), 'theirs\n');
    await rm(join(root, 'package.json'));
    await symlink(join(root, 'victim.json'), join(root, 'package.json'));
    await writeProjectFile(plan, 'package.json', '{"name":"mine"}\n', root);
    expect(await readFile(join(root, 'victim.json'), 'utf8')).toBe('theirs\n');
    expect(await readFile(join(root, 'package.json'), 'utf8')).toBe('{"name":"mine"}\n');
    await expect(readlink(join(root, 'package.json'))).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('stops when a folder on the way was swapped for a link', async () => {
    const root = await tempDir();
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    const plan = await checkPlan(root, ['listeners/hello.ts']);
    expect(plan.folders).toEqual([join(root, 'listeners')]);
    await makeFolders(plan);
    await rename(join(root, 'listeners'), join(root, 'moved'));
    await symlink(elsewhere, join(root, 'listeners'));
    await expect(writeProjectFile(plan, 'listeners/hello.ts', 'x', root)).rejects.toMatchObject({
      code: 'init.unsafe_path',
      message: expect.stringContaining(
        `${join(root, 'listeners')} changed while init ran (it now leads to ${elsewhere})`,
      ),
    });
    expect(await exists(join(elsewhere, 'hello.ts'))).toBe(false);
  });

  it('refuses a folder to make that became a link', async () => {
    const root = await tempDir();
    const plan = await checkPlan(root, ['tools/word-count.ts']);
    await symlink(join(root, 'nowhere'), join(root, 'tools'));
    await expect(makeFolders(plan)).rejects.toMatchObject({ code: 'init.unsafe_path' });
    expect(await exists(join(root, 'nowhere'))).toBe(false);
  });
});
