#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
// `npm run build` (also run by `prepare`: on `npm install` in a checkout, on an install from git,
// and by `npm pack`/`npm publish`): compiles src/, tools/ and librarian/ to JavaScript in dist/
// (tsconfig.build.json), writes the public surface's .d.ts files (tsconfig.types.json), and copies
// the non-TypeScript files the runtime reads beside its modules (the Lua scripts, the dashboard's
// page and browser modules).
//
// The new dist/ is built beside the old one and swapped in at the end, so a daemon or a test
// started meanwhile never sees it half-written, and a file deleted from the source does not live
// on. `--if-stale` skips the build when dist/ was built from the sources as they are now (the test
// suite's global setup uses it).
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
/** Folders compiled, and searched for the assets their modules read at run time. */
const FOLDERS = ['src', 'tools', 'librarian'];
const CONFIGS = [
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.types.json',
  'organism.schema.json',
  'bin/precompile-validators.js',
  'bin/bundle-daemon.js',
];
const ASSET = /\.lua$|[\\/]dashboard[\\/]assets[\\/]/;
const SIGNATURE_FILE = '.source-signature';

function files(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files(path, out);
    else out.push(path);
  }
  return out;
}

/** What dist/ is built from: every file's path, size and mtime, and this script. */
function sourceSignature() {
  const hash = createHash('sha256');
  const inputs = [...FOLDERS.flatMap((f) => files(join(root, f))), ...CONFIGS.map((f) => join(root, f))];
  inputs.push(fileURLToPath(import.meta.url));
  for (const path of inputs.sort()) {
    const info = statSync(path);
    hash.update(`${relative(root, path)}\0${info.size}\0${info.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

const signature = sourceSignature();
if (process.argv.includes('--if-stale')) {
  const built = join(dist, SIGNATURE_FILE);
  if (existsSync(built) && readFileSync(built, 'utf8') === signature) process.exit(0);
}

let tsc;
try {
  tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
} catch {
  console.error(
    'organism build: the typescript package is not installed (a devDependency: run `npm install`)',
  );
  process.exit(1);
}

const next = join(root, `dist.next-${process.pid}`);
rmSync(next, { recursive: true, force: true });
// tsc writes its output even when it reports type errors; the build then still fails, after
// finishing, so the errors are seen.
const failed = [];
for (const project of ['tsconfig.build.json', 'tsconfig.types.json']) {
  const args = [tsc, '-p', join(root, project), '--outDir', next];
  const result = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
  if (result.status !== 0) failed.push(project);
}

for (const folder of FOLDERS) {
  for (const path of files(join(root, folder))) {
    if (!ASSET.test(path)) continue;
    const target = join(next, relative(root, path));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(path, target);
  }
}
// ajv's standalone code for the schemas every start checks (see the script). Without it the
// runtime compiles them itself, slower; a failure here fails the build after it finishes.
const precompile = join(root, 'bin', 'precompile-validators.js');
if (spawnSync(process.execPath, [precompile, next], { stdio: 'inherit', cwd: root }).status !== 0) {
  failed.push('bin/precompile-validators.js');
}
// `organism run`'s module with the daemon's own modules in one file (see the script): a start
// loads ~150 fewer modules.
const bundle = join(root, 'bin', 'bundle-daemon.js');
if (spawnSync(process.execPath, [bundle, next], { stdio: 'inherit', cwd: root }).status !== 0) {
  failed.push('bin/bundle-daemon.js');
}
writeFileSync(join(next, SIGNATURE_FILE), signature);

// Swap: another build running at the same moment may have swapped its own in first; either is
// built from the same sources.
const old = join(root, `dist.old-${process.pid}`);
try {
  renameSync(dist, old);
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
try {
  renameSync(next, dist);
} catch (error) {
  if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
}
rmSync(old, { recursive: true, force: true });
rmSync(next, { recursive: true, force: true });

if (failed.length > 0) {
  console.error(`organism build: errors from ${failed.join(', ')}; dist/ was written anyway`);
  process.exit(1);
}
