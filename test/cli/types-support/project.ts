/**
 * A small TypeScript project in a temp folder, as a user has it after `npm install organism zod`:
 * node_modules/organism is this checkout (its built dist/, which test/build-setup.ts keeps
 * current), zod and the types the package's declarations need are the checkout's own.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../../helpers/daemon.ts';

export async function tsProject(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-types-'));
  await mkdir(join(dir, 'node_modules/@types'), { recursive: true });
  await symlink(REPO_ROOT, join(dir, 'node_modules/organism'));
  for (const name of ['zod', '@standard-schema', '@types/node'])
    await symlink(join(REPO_ROOT, 'node_modules', name), join(dir, 'node_modules', name));
  const all = {
    'package.json': JSON.stringify({ name: 'typed', type: 'module', private: true }),
    'tsconfig.json': JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
      },
      include: ['listeners', 'tools', 'organism-env.d.ts'],
    }),
    ...files,
  };
  for (const [name, text] of Object.entries(all)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

/** `tsc --noEmit -p dir`: its exit code and the error lines (`file(line,col): error TSnnnn: ...`). */
export function typecheck(dir: string): { code: number | null; errors: string[]; out: string } {
  const result = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  const out = `${result.stdout}${result.stderr}`;
  return { code: result.status, errors: out.split('\n').filter((l) => /error TS\d+/.test(l)), out };
}
