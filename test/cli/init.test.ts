/** `organism init [dir]`: what it writes, what it refuses to overwrite, how it completes a package.json. */

import { spawn } from 'node:child_process';
import { link, mkdir, mkdtemp, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergePackageJson, versionsFrom } from '../../src/cli/init/project.ts';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { loadConfig } from '../../src/config/index.ts';
import { runCli } from '../helpers/daemon.ts';

const FILES = [
  '.env.example',
  '.gitignore',
  'README.md',
  'listeners/hello.ts',
  'organism.yaml',
  'package.json',
  'test/hello.test.ts',
  'tools/word-count.ts',
  'tsconfig.json',
];

async function init(...args: string[]) {
  const io = captureIo();
  const code = await main(['init', ...args], io);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

const tempDir = () => mkdtemp(join(tmpdir(), 'organism-init-'));

describe('organism init', () => {
  it('writes a project into a new folder and prints the next steps', async () => {
    const dir = join(await tempDir(), 'My Bot');
    const { code, out, err } = await init(dir);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(await listFiles(dir)).toEqual(FILES);
    expect(out).toContain('Next steps:');
    expect(out).toContain(`cd "${dir}"`); // quoted: the folder's name has a space
    expect(out).toContain('npm install');
    expect(out).toContain(
      'npm run dev          # the organism on http://127.0.0.1:7777, reloaded on every save',
    );

    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: 'my-bot',
      type: 'module',
      scripts: {
        start: 'organism run',
        dev: 'organism dev',
        pretest: 'organism types && tsc --noEmit',
        test: 'vitest run',
        types: 'organism types',
        validate: 'organism validate',
      },
      dependencies: {
        organism: expect.stringMatching(/^\^\d+\.\d+\.\d+/),
        zod: expect.stringMatching(/^\^4\./),
      },
    });
    expect(Object.keys(pkg.devDependencies).sort()).toEqual(['@types/node', 'typescript', 'vitest']);

    // The organism.yaml is valid against the schema, names its schema, and grants the project's tool.
    const yaml = await readFile(join(dir, 'organism.yaml'), 'utf8');
    expect(yaml.split('\n')[0]).toBe(
      '# yaml-language-server: $schema=./node_modules/organism/organism.schema.json',
    );
    // Both point to the docs the package ships: the yaml to its reference, the README to the guide.
    expect(yaml).toContain('# node_modules/organism/docs/reference/configuration.md');
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\((node_modules\/organism\/docs\/[^)]+)\)/g)].map((m) => m[1]);
    expect(links).toEqual([
      'node_modules/organism/docs/guide/project.md',
      'node_modules/organism/docs/guide/testing.md',
      'node_modules/organism/docs/reference/configuration.md',
      'node_modules/organism/docs/reference/cli.md',
      'node_modules/organism/docs/reference/http-api.md',
      'node_modules/organism/docs/README.md',
    ]);
    const { config } = await loadConfig(join(dir, 'organism.yaml'), { loadModules: false });
    expect(config.organism.name).toBe('my-bot');
    expect(config.tool_modules).toEqual([join(dir, 'tools')]);
    expect(config.listeners.map((l) => [l.name, l.tools])).toEqual([['hello', ['word_count']]]);

    const tsconfig = JSON.parse(await readFile(join(dir, 'tsconfig.json'), 'utf8'));
    expect(tsconfig.compilerOptions).toMatchObject({
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
    });
    expect(tsconfig.compilerOptions.allowImportingTsExtensions).toBeUndefined();
    expect(await readFile(join(dir, '.gitignore'), 'utf8')).toMatch(/^\.env$/m);
  });

  it('refuses to overwrite, names what exists, and writes nothing; --force overwrites', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'organism.yaml'), 'mine\n');
    const refused = await init(dir);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`${dir} already has organism.yaml; nothing was written. Use --force`);
    expect(await listFiles(dir)).toEqual(['organism.yaml']);
    expect(await readFile(join(dir, 'organism.yaml'), 'utf8')).toBe('mine\n');

    const forced = await init(dir, '--force');
    expect(forced.code).toBe(0);
    expect(forced.out).toContain('organism.yaml (overwritten)');
    expect(await readFile(join(dir, 'organism.yaml'), 'utf8')).toContain('tool_modules: [./tools]');
    expect(await listFiles(dir)).toEqual(FILES);
  });

  it('completes the package.json that `npm install <tarball>` wrote, keeping its organism dependency', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'x',
        version: '1.0.0',
        type: 'commonjs',
        scripts: { test: 'echo "Error: no test specified" && exit 1', start: 'node server.js' },
        dependencies: { organism: 'file:../organism-0.1.0.tgz', left: '^1.0.0' },
      }),
    );
    const { code, out } = await init(dir);
    expect(code).toBe(0);
    expect(out).toContain('package.json (updated)');
    expect(out).toContain('"type" set to "module" (was "commonjs")');
    expect(out).toContain('kept your scripts.start ("node server.js")');
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: 'x',
      type: 'module',
      scripts: { test: 'vitest run', start: 'node server.js', validate: 'organism validate' },
      dependencies: { organism: 'file:../organism-0.1.0.tgz', left: '^1.0.0' },
    });
  });

  it('adds esbuild to the project only when organism does not bring it itself, its postinstall denied', () => {
    const facts = { name: 'p' };
    const base = {
      version: '1.2.3',
      devDependencies: { typescript: '^7.0.0', vitest: '^4.0.0', esbuild: '^0.28.2', zod: '^4.6.0' },
    };
    const bundled = versionsFrom({ ...base, dependencies: { esbuild: '^0.28.0' } });
    const withBundled = mergePackageJson(undefined, facts, bundled, false).json;
    expect(withBundled.dependencies).toEqual({ organism: '^1.2.3', zod: '^4.6.0' });
    expect(withBundled.allowScripts).toBeUndefined();
    const peer = versionsFrom({ ...base, peerDependencies: { esbuild: '>=0.18.0' } });
    const withPeer = mergePackageJson(undefined, facts, peer, false).json;
    expect(withPeer.dependencies).toEqual({ organism: '^1.2.3', zod: '^4.6.0', esbuild: '^0.28.2' });
    expect(withPeer.allowScripts).toEqual({ esbuild: false });
  });

  it('--force overwrites files and scripts but keeps the organism the project installed', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ scripts: { start: 'node x.js' }, devDependencies: { organism: 'file:../o.tgz' } }),
    );
    expect((await init(dir)).code).toBe(0);
    expect((await init(dir, '--force')).code).toBe(0);
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    expect(pkg.scripts.start).toBe('organism run');
    expect(pkg.devDependencies.organism).toBe('file:../o.tgz');
    expect(pkg.dependencies?.organism).toBeUndefined();
  });

  it('--organism sets the dependency; --name the organism name', async () => {
    const dir = await tempDir();
    const { code } = await init(dir, '--organism', 'file:/somewhere/organism.tgz', '--name', 'greeter-bot');
    expect(code).toBe(0);
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies.organism).toBe('file:/somewhere/organism.tgz');
    expect(await readFile(join(dir, 'organism.yaml'), 'utf8')).toContain('  name: greeter-bot\n');
  });

  it('says what is wrong with bad input', async () => {
    const dir = await tempDir();
    expect((await init(dir, '--name', 'Not Valid')).err).toContain('--name "Not Valid": use lowercase');
    expect((await init('a', 'b')).err).toContain('expected at most one folder, got 2');
    expect((await init('--frobnicate')).err).toMatch(/organism init: .*--frobnicate/);
    await writeFile(join(dir, 'a-file'), '');
    expect((await init(join(dir, 'a-file'))).err).toContain(`${join(dir, 'a-file')} is a file, not a folder`);
    await mkdir(join(dir, 'broken'));
    await writeFile(join(dir, 'broken/package.json'), '{ nope');
    const broken = await init(join(dir, 'broken'));
    expect(broken.code).toBe(1);
    expect(broken.err).toContain(`${join(dir, 'broken/package.json')} is not a JSON object`);
    expect(await listFiles(join(dir, 'broken'))).toEqual(['package.json']);
  });

  it('prints its help with --help, and is listed in organism --help', async () => {
    const help = await init('--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^usage: organism init \[dir\] \[options\]/);
    expect(help.out).toContain('--force');
    const io = captureIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/^ {2}init +write a new project/m);
  });
});

/** Every file under `dir`, links included (not followed), as relative paths. */
async function listAll(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

describe('organism init writes only inside its folder (issue 25 point 7)', () => {
  it('refuses a package.json that links to another project, and leaves that project alone', async () => {
    const root = await tempDir();
    const other = join(root, 'other');
    await mkdir(other);
    const theirs = '{"name":"other","scripts":{"start":"node keep.js"}}\n';
    await writeFile(join(other, 'package.json'), theirs);
    const dir = join(root, 'mine');
    await mkdir(dir);
    await symlink(join(other, 'package.json'), join(dir, 'package.json'));
    for (const args of [[dir], [dir, '--force']]) {
      const { code, err } = await init(...args);
      expect(code).toBe(1);
      expect(err).toContain(
        `${join(dir, 'package.json')} is a symbolic link (to ${join(other, 'package.json')})`,
      );
      expect(err).toContain('Nothing was written');
      expect(err).not.toMatch(/\n\s+at /); // no stack
    }
    expect(await readFile(join(other, 'package.json'), 'utf8')).toBe(theirs);
    expect(await listAll(dir)).toEqual(['package.json']);
  });

  it('refuses dangling links where it would create organism.yaml or .gitignore: nothing is created outside', async () => {
    const root = await tempDir();
    const dir = join(root, 'mine');
    await mkdir(dir);
    await symlink(join(root, 'outside', 'organism.yaml'), join(dir, 'organism.yaml'));
    await symlink(join(root, 'created-outside'), join(dir, '.gitignore'));
    const { code, err } = await init(dir, '--force');
    expect(code).toBe(1);
    expect(err).toContain(`${join(dir, 'organism.yaml')} is a symbolic link`);
    expect(err).toContain(
      `${join(dir, '.gitignore')} is a symbolic link (to ${join(root, 'created-outside')})`,
    );
    expect(await exists(join(root, 'created-outside'))).toBe(false);
    expect(await listAll(root)).toEqual(['mine', 'mine/.gitignore', 'mine/organism.yaml']);
  });

  it('refuses a folder on the way that is a link, dangling or not, with a clear error and nothing written', async () => {
    const root = await tempDir();
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    const dir = join(root, 'mine');
    await mkdir(dir);
    await symlink(join(root, 'nowhere'), join(dir, 'listeners'));
    await symlink(elsewhere, join(dir, 'tools'));
    const { code, err } = await init(dir);
    expect(code).toBe(1);
    expect(err).toContain(`${join(dir, 'listeners')} is a symbolic link (to ${join(root, 'nowhere')})`);
    expect(err).toContain(`${join(dir, 'tools')} is a symbolic link (to ${elsewhere})`);
    expect(err).not.toMatch(/\n\s+at /);
    expect(await listAll(root)).toEqual(['elsewhere', 'mine', 'mine/listeners', 'mine/tools']);
  });

  it('refuses what is not a plain file where it would write one (a folder, a FIFO), before reading or writing', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'organism.yaml'));
    await writeFile(join(dir, 'test'), 'a file where a folder goes\n');
    const { code, err } = await init(dir, '--force');
    expect(code).toBe(1);
    expect(err).toContain(`${join(dir, 'organism.yaml')} is a folder, not a file`);
    expect(err).toContain(`${join(dir, 'test')} is a file, not a folder`);
    expect(await listAll(dir)).toEqual(['organism.yaml', 'test']);

    // A FIFO as package.json would block the read forever.
    const fifoDir = await tempDir();
    const made = await runCommand('mkfifo', [join(fifoDir, 'package.json')]);
    expect(made).toBe(0);
    const fifo = await init(fifoDir);
    expect(fifo.code).toBe(1);
    expect(fifo.err).toContain(`${join(fifoDir, 'package.json')} is not a regular file`);
  });

  it('replaces a hard-linked file instead of writing through it: the other name keeps its content', async () => {
    const root = await tempDir();
    const theirs = '{"name":"other"}\n';
    await writeFile(join(root, 'their-package.json'), theirs);
    const dir = join(root, 'mine');
    await mkdir(dir);
    await link(join(root, 'their-package.json'), join(dir, 'package.json'));
    await writeFile(join(root, 'their.yaml'), 'theirs: true\n');
    await link(join(root, 'their.yaml'), join(dir, 'organism.yaml'));
    const { code } = await init(dir, '--force');
    expect(code).toBe(0);
    expect(await readFile(join(root, 'their-package.json'), 'utf8')).toBe(theirs);
    expect(await readFile(join(root, 'their.yaml'), 'utf8')).toBe('theirs: true\n');
    expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).type).toBe('module');
    expect(await readFile(join(dir, 'organism.yaml'), 'utf8')).toContain('tool_modules');
  });

  it('follows the folder it is given when that is a link, and refuses one that leads nowhere', async () => {
    const root = await tempDir();
    await mkdir(join(root, 'real'));
    await symlink(join(root, 'real'), join(root, 'alias'));
    expect((await init(join(root, 'alias'))).code).toBe(0);
    expect(await listFiles(join(root, 'real'))).toEqual(FILES);
    await symlink(join(root, 'gone'), join(root, 'dangling'));
    const { code, err } = await init(join(root, 'dangling'));
    expect(code).toBe(1);
    expect(err).toContain(
      `${join(root, 'dangling')} is a symbolic link to ${join(root, 'gone')}, which does not exist`,
    );
    expect(await exists(join(root, 'gone'))).toBe(false);
  });

  it('refuses through the real command too (bin/organism.js), with one line and no stack', async () => {
    const root = await tempDir();
    const dir = join(root, 'mine');
    await mkdir(dir);
    await symlink(join(root, 'nowhere'), join(dir, 'listeners'));
    const { code, stdout, stderr } = await runCli(['init', dir]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')[0]).toContain(`${join(dir, 'listeners')} is a symbolic link`);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(await listAll(root)).toEqual(['mine', 'mine/listeners']);
  });
});

function runCommand(command: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => spawn(command, args, { stdio: 'ignore' }).on('exit', resolve));
}
