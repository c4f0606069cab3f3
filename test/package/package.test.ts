/**
 * The package as a user gets it: what `npm pack` ships, and that a plain NodeNext project
 * typechecks against its .d.ts files (no allowImportingTsExtensions, no TS5097). Runs against the
 * dist/ that the test setup (test/build-setup.ts) built from the current source.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

describe('npm pack', () => {
  let files: string[];

  beforeAll(async () => {
    // --ignore-scripts: dist/ is already built by the test setup; prepare would build it again.
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    files = (JSON.parse(stdout) as [{ files: { path: string }[] }])[0].files.map((f) => f.path);
  }, 60_000);

  it('ships the compiled runtime with its types, the schema, the README, the bin and the example listeners', () => {
    for (const path of [
      'package.json',
      'README.md',
      'organism.schema.json',
      'organism.yaml',
      'bin/organism.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/testing/index.js',
      'dist/src/testing/index.d.ts',
      'dist/src/cli/main.js',
      'dist/tools/calculate.js',
      'dist/librarian/embedded/query-worker.js',
      'dist/src/telemetry/export-worker.js',
      'dist/src/bus/transport/redis/lua/batch.lua',
      'listeners/greeter.ts',
      'listeners/assistant.script.yaml',
      'docs/reference/configuration.md',
      'docs/reference/cli.md',
      'docs/reference/errors.md',
      'docs/reference/tool-results.md',
      'docs/reference/http-api.md',
      'docs/reference/http-api.json',
    ]) {
      expect(files, path).toContain(path);
    }
  });

  it('ships docs/ whole, so the links of organism --help and of an init project resolve in node_modules/organism', async () => {
    const { readdir } = await import('node:fs/promises');
    const docs = (await readdir(join(ROOT, 'docs'), { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(ROOT.length));
    expect(docs.length).toBeGreaterThan(6);
    expect(docs.filter((path) => !files.includes(path))).toEqual([]);
    // What organism --help and an init project's README and organism.yaml point to is in the package.
    const { PROJECT_README, ORGANISM_YAML } = await import('../../src/cli/init/templates.ts');
    const { captureIo } = await import('../../src/cli/io.ts');
    const { main } = await import('../../src/cli/main.ts');
    const io = captureIo();
    await main(['--help'], io);
    const pointers = [
      ...`${PROJECT_README({ name: 'x' })}\n${ORGANISM_YAML({ name: 'x' })}`.matchAll(
        /node_modules\/organism\/(docs\/[\w./-]+\.md)/g,
      ),
      ...io.stdout.join('\n').matchAll(/\b(docs\/[\w./-]+\.md)/g),
    ].map((m) => m[1]!);
    expect(pointers).toEqual(expect.arrayContaining(['docs/README.md', 'docs/guide/project.md']));
    expect(pointers.filter((path) => !files.includes(path))).toEqual([]);
  });

  it('ships no tests, no TypeScript source of the runtime, no source maps, no build tooling', () => {
    const unwanted = files.filter(
      (path) =>
        /^(test|bench|src|tools|librarian|\.ci)\//.test(path) ||
        /(^|\/)[^/]+\.test\.[jt]s$/.test(path) ||
        path.endsWith('.map') ||
        /^tsconfig.*\.json$/.test(path) ||
        path === 'bin/build.js' ||
        path === 'bin/bench.js',
    );
    expect(unwanted).toEqual([]);
  });
});

describe('a user project typechecks against the package', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'organism-types-'));
    await mkdir(join(dir, 'node_modules', '@types'), { recursive: true });
    await symlink(ROOT.replace(/\/$/, ''), join(dir, 'node_modules', 'organism'));
    await symlink(join(ROOT, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'));
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'user', private: true, type: 'module' }),
    );
    // What `tsc --init` style projects have: nothing organism-specific (skipLibCheck left off, so
    // the package's own .d.ts files are checked too).
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: ['node'],
        },
        include: ['listeners'],
      }),
    );
    await mkdir(join(dir, 'listeners'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function typecheck(source: string): Promise<{ ok: boolean; output: string }> {
    await writeFile(join(dir, 'listeners', 'hello.ts'), source);
    try {
      await run(process.execPath, [TSC, '-p', dir], { cwd: dir });
      return { ok: true, output: '' };
    } catch (error) {
      const { stdout, stderr } = error as { stdout: string; stderr: string };
      return { ok: false, output: `${stdout}${stderr}` };
    }
  }

  const listener = (respond: string) => `import { defineListener, OrganismError } from 'organism';
import type { HandlerContext } from 'organism';
import { until } from 'organism/testing';

export const ready = (): Promise<boolean> => until(() => true);

interface Greeting { name: string }
interface Reply { text: string }

export default defineListener<Greeting, Reply>({
  payload: { tag: 'greeting', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  response: { tag: 'reply', schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  handler: (payload, ctx: HandlerContext<Reply>) => {
    if (payload.name === '') throw new OrganismError('demo.empty', 'no name');
    return ctx.respond(${respond});
  },
});
`;

  it('a listener importing organism typechecks with a plain NodeNext tsconfig', async () => {
    const result = await typecheck(listener("{ text: 'Hello, ' + payload.name }"));
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 60_000);

  it('ctx.respond checks its object against the listener response type', async () => {
    const result = await typecheck(listener("{ txt: 'misspelt' }"));
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/listeners\/hello\.ts.*error TS\d+.*'txt'/s);
  }, 60_000);
});
