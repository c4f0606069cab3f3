#!/usr/bin/env node
// Run by bin/build.js on the freshly compiled tree (its one argument): rewrites
// src/cli/commands/run.js, the module `organism run` and `organism dev` start the daemon from, as
// one file holding it with the daemon's modules (esbuild). Node 20's ES module loader spends ~1 ms
// of CPU per module (resolve, read, compile, link, in turns of the event loop); a default-organism
// start loaded ~350 of Organism's own, and ~150 of them now come in this one file (start-up CPU
// ~1,000 -> ~720 ms, bench/daemon.ts; docs/internals/benchmarks.md, "Start-up").
//
// One instance of each module: a module is bundled only when nothing else a daemon's process
// loads reaches it, so no other copy of it (its classes, symbols, module state) can ever load
// beside the bundled one. The other ways into the tree, kept as modules and imported by the
// bundle from their own files:
// - the package's export (a listener's `import ... from 'organism'`: src/index.js);
// - bin/organism.js's own imports (src/cli/main.js, src/daemon/v8-flags.js) and `organism dev`'s
//   module (it runs the daemon through run.js);
// - every module under tools/ and librarian/ (the tool catalog imports them by path);
// - every dynamic import() of a module that a daemon's process loads (MCP, Redis, telemetry,
//   the librarian's backends...): loaded when first used, as before. src/cli/main.js imports each
//   command's module that way; only `run` and `dev` run in a daemon's process.
// with everything they import in turn. `organism/testing` is not one: a project's tests run their
// listeners and tools with it in a process of their own, from the modules, never through run.js (a
// handler that imported it in a daemon would load a second copy of what it shares with the bundle).
//
// Each bundled module's import.meta.url is its own file's (the Lua scripts, the precompiled
// validators and the package root are found beside it, as before). Without esbuild (an install
// from git without devDependencies) run.js stays as tsc wrote it: the same daemon, slower to start.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

const ENTRY = 'src/cli/commands/run.js';
/** run.js's dynamic imports that are bundled into it: the daemon, loaded only to run it. */
const INLINE = ['src/daemon.js', 'src/daemon/shutdown.js'];
/** Modules loaded in a daemon's process other than through run.js (see above). */
const ROOTS = ['src/index.js', 'src/cli/main.js', 'src/daemon/v8-flags.js', 'src/cli/commands/dev.js'];
/** Loaded by path (the tool catalog, the librarian's worker): every module under them is a root. */
const ROOT_FOLDERS = ['tools', 'librarian'];
/** The module whose dynamic imports are the CLI's commands: only these run in a daemon's process. */
const COMMANDS = {
  module: 'src/cli/main.js',
  inProcess: ['src/cli/commands/run.js', 'src/cli/commands/dev.js'],
};

/** Browser modules (the dashboard's page), copied into the tree but never loaded by Node. */
const BROWSER = /[\\/]dashboard[\\/]assets[\\/]/;

function modules(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? modules(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

/**
 * Every module of the tree with the modules it imports, statically and with import() (absolute
 * paths), as esbuild reads them (packages and node: left out).
 */
async function importGraph(esbuild, tree) {
  const files = ['src', ...ROOT_FOLDERS]
    .flatMap((f) => modules(join(tree, f)))
    .filter((f) => !BROWSER.test(f));
  const { metafile } = await esbuild.build({
    entryPoints: files,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    write: false,
    metafile: true,
    outdir: join(tree, '.graph'),
    absWorkingDir: resolve(tree),
    logLevel: 'silent',
  });
  const graph = new Map();
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    const of = (kind) =>
      imports.filter((i) => i.kind === kind && !i.external).map((i) => resolve(tree, i.path));
    graph.set(resolve(tree, input), { static: of('import-statement'), dynamic: of('dynamic-import') });
  }
  return graph;
}

function staticClosure(graph, roots) {
  const seen = new Set();
  const queue = [...roots];
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file) || !graph.has(file)) continue;
    seen.add(file);
    queue.push(...graph.get(file).static);
  }
  return seen;
}

/**
 * Which modules of the compiled tree go into run.js: `bundled` (absolute paths, in no order), the
 * rest of what a daemon's process can load being `shared`. The same on the built tree (the modules
 * stay in it; run.js and its chunks are shared). Throws when an inlined module is also imported
 * another way (it would load twice). `esbuild`: the package (it reads the imports).
 */
export async function daemonBundlePlan(tree, esbuild) {
  const graph = await importGraph(esbuild, tree);
  const path = (p) => resolve(tree, p);
  const entry = path(ENTRY);
  const inline = new Set(INLINE.map(path));
  const commands = new Set(COMMANDS.inProcess.map(path));
  const roots = new Set([...ROOTS.map(path), ...ROOT_FOLDERS.flatMap((f) => modules(path(f)))]);
  const daemon = staticClosure(graph, [entry, ...inline]);
  // Every dynamic import of a module the process may load is a root too, to a fixed point.
  let shared;
  for (let size = -1; size !== roots.size; ) {
    size = roots.size;
    shared = staticClosure(graph, roots);
    for (const file of new Set([...shared, ...daemon])) {
      for (const target of graph.get(file)?.dynamic ?? []) {
        if (file === path(COMMANDS.module) && !commands.has(target)) continue;
        if (inline.has(target) && file !== entry) {
          throw new Error(
            `bundle-daemon: ${relative(tree, target)} is also imported by ${relative(tree, file)}`,
          );
        }
        if (target !== entry && !inline.has(target)) roots.add(target);
      }
    }
  }
  for (const file of inline) {
    if (shared.has(file))
      throw new Error(`bundle-daemon: ${relative(tree, file)} is reached from outside run.js`);
  }
  const bundled = [...daemon].filter((f) => f !== entry && !shared.has(f));
  return { entry, bundled, shared };
}

/** Writes the bundle over run.js; false (run.js left as it is) when esbuild is not installed. */
export async function bundleDaemon(tree) {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)('esbuild');
  } catch {
    return false;
  }
  const { entry, bundled } = await daemonBundlePlan(tree, esbuild);
  const inBundle = new Set(bundled);
  const from = dirname(entry);
  const specifier = (file) => {
    const rel = relative(from, file).split(sep).join('/');
    return rel.startsWith('.') ? rel : `./${rel}`;
  };
  const plugin = {
    name: 'organism-daemon',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        if (!args.path.startsWith('.')) return { external: true }; // node: and packages
        const file = resolve(args.resolveDir, args.path);
        return file === entry || inBundle.has(file)
          ? { path: file }
          : { path: specifier(file), external: true };
      });
      build.onLoad({ filter: /\.js$/ }, (args) => {
        let contents = readFileSync(args.path, 'utf8');
        if (args.path !== entry) {
          const own = `new URL(${JSON.stringify(specifier(args.path))}, import.meta.url).href`;
          contents = contents.replace(/\bimport\.meta\.url\b/g, own);
        }
        return { contents, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    // The daemon's part (run.js imports daemon.js when it runs it) goes to a file of its own, so
    // loading run.js alone (`organism --help` reads each command's summary) loads no more than before.
    splitting: true,
    chunkNames: 'daemon-bundle-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20', // package.json engines
    // Class and function names as written: error names and logs show them.
    keepNames: true,
    write: false,
    outdir: from,
    allowOverwrite: true,
    // Each module's code is headed by its path: src/bus/bus.js, not the staging folder's.
    absWorkingDir: resolve(tree),
    plugins: [plugin],
    logLevel: 'warning',
  });
  for (const file of result.outputFiles) writeFileSync(file.path, file.text);
  // tsc's source map describes the module that is no longer there.
  rmSync(`${entry}.map`, { force: true });
  return true;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const tree = process.argv[2];
  if (!tree) {
    console.error('usage: bundle-daemon.js <compiled tree>');
    process.exit(2);
  }
  if (!(await bundleDaemon(tree))) {
    console.error('organism build: esbuild is not installed; `organism run` loads its modules one by one');
  }
}
