/**
 * `organism init [dir]`: writes a working project around the package: organism.yaml, a listener, a
 * tool of its own, a test, a plain tsconfig, .env.example, .gitignore, a README, and package.json
 * (created, or the existing one completed). Nothing is overwritten without --force, and nothing at
 * all is written when something would be, or when a path it would write is a link (paths.ts).
 */
import { readFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { UsageError } from '../../errors.ts';
import { packageFile } from '../../package-root.ts';
import { parseCommandArgs } from '../args.ts';
import { checkPlan, makeFolders, projectRoot, readPlainFile, writeProjectFile } from '../init/paths.ts';
import {
  mergePackageJson,
  parsePackageJson,
  projectFiles,
  projectName,
  versionsFrom,
} from '../init/project.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'write a new project: organism.yaml, a listener, a tool, a test, package.json';

const HELP = `usage: organism init [dir] [options]

Writes a working Organism project into dir (default: the current folder; created if missing):

  package.json          "type": "module", scripts start / dev / test / types / validate,
                        organism and zod as dependencies; an existing package.json is completed,
                        not replaced. npm test runs 'organism types' and tsc first
  organism.yaml         one listener, hello, granted your own tool word_count
  listeners/hello.ts    the listener (defineListener, its payload a zod schema)
  tools/word-count.ts   a tool of the project (tool_modules: [./tools] in organism.yaml)
  test/hello.test.ts    tests the listener with vitest and organism/testing
  tsconfig.json         plain NodeNext, for \`npx tsc --noEmit\`; includes organism-env.d.ts,
                        which 'organism types' writes (tools and peers typed by organism.yaml)
  .env.example, .gitignore, README.md

Then: npm install && npm test && npm run dev

options:
      --name NAME       organism.name and the package name (default: the folder's name)
      --organism SPEC   the organism dependency to write, e.g. a version range or a tarball path
                        (default: the one already in package.json, else ^<this version>)
  -f, --force           overwrite files that exist (and package.json scripts init would set)
  -h, --help            show this help

examples:
  npx organism init                 # here
  npx organism init my-organism     # into ./my-organism`;

const OPTIONS = {
  name: { type: 'string' },
  organism: { type: 'string' },
  force: { type: 'boolean', short: 'f' },
} as const;

const NAME = /^[a-z0-9][a-z0-9_-]*$/;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS);
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length > 1) {
    throw new UsageError(`expected at most one folder, got ${positionals.length}: ${positionals.join(' ')}`);
  }
  const dir = resolve(positionals[0] ?? '.');
  const force = values.force === true;
  const name = values.name ?? projectName(dir);
  if (!NAME.test(name)) {
    throw new UsageError(
      `--name ${JSON.stringify(name)}: use lowercase letters, digits, - and _, starting with a letter or digit`,
    );
  }
  const facts = { name };
  const files = projectFiles(facts);
  // Every path is checked before the first write: a link or a non-file anywhere refuses the run.
  const { root } = await projectRoot(dir);
  const plan = await checkPlan(root, ['package.json', ...files.map(([path]) => path)]);

  const taken = files.map(([path]) => path).filter((path) => plan.existing.has(path));
  if (taken.length > 0 && !force) {
    throw new UsageError(
      `${dir} already has ${taken.join(', ')}; nothing was written. Use --force to overwrite ${taken.length === 1 ? 'it' : 'them'}, or pick an empty folder.`,
    );
  }

  const packagePath = join(root, 'package.json');
  const existingText = plan.existing.has('package.json') ? await readPlainFile(packagePath) : null;
  const existing = existingText === null ? undefined : parsePackageJson(packagePath, existingText);
  const organismPackage = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as Record<
    string,
    any
  >;
  const merged = mergePackageJson(existing, facts, versionsFrom(organismPackage, values.organism), force);

  await makeFolders(plan);
  const realRoot = await realpath(root);
  await writeProjectFile(plan, 'package.json', `${JSON.stringify(merged.json, null, 2)}\n`, realRoot);
  for (const [path, content] of files) await writeProjectFile(plan, path, content, realRoot);

  const rel = relative(process.cwd(), dir);
  const shown = rel === '' ? '.' : rel.startsWith('..') ? dir : rel;
  io.out(`Wrote an Organism project into ${shown}:`);
  io.out(`  package.json${existing ? ' (updated)' : ''}`);
  for (const [path] of files) io.out(`  ${path}${taken.includes(path) ? ' (overwritten)' : ''}`);
  for (const note of merged.notes) io.out(`note: package.json: ${note}`);
  io.out('');
  io.out('Next steps:');
  if (shown !== '.') io.out(`  cd ${/[\s'"$`\\]/.test(shown) ? JSON.stringify(shown) : shown}`);
  io.out('  npm install');
  io.out('  npm test             # organism types, tsc, then the listener under vitest');
  io.out('  npm run dev          # the organism on http://127.0.0.1:7777, reloaded on every save');
  io.out("  npx organism send --to hello '<hello><name>Ada</name></hello>' --wait   # in another terminal");
  return 0;
}
