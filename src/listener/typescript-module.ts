/**
 * Imports a user's TypeScript module in the compiled runtime, on the daemon's own thread.
 *
 * esbuild compiles the module and the local files it imports (its own helpers, .ts or .js) into one
 * ES module; packages stay outside it, each imported from the file Node itself would load, so
 * `organism` is the running runtime's own instance. The result, with a source map naming the user's
 * files (so a stack trace shows their file:line), is written to a private temporary folder,
 * imported, and deleted: all its imports are absolute, so where it lies does not matter, and Node
 * applies source maps to file modules only (not to `data:` URLs).
 *
 * Why not a loader (tsx): Node 20 runs module hooks on a thread of their own, which with tsx and
 * esbuild loaded into it costs the daemon ~50 MB for as long as it runs. esbuild's service is a
 * separate process here, stopped shortly after the last compile; and a module compiled before and
 * unchanged since comes from compiled-cache.ts without esbuild.
 *
 * A listener is an ES module (`import ... from 'organism'`), so it is compiled as one whatever the
 * project's "type" (commonjs too). Being one bundle, a module whose files changed is a new module:
 * an edited handler or helper is what the next reload gets.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ListenerLoadError } from '../errors.ts';
import { cacheDir, cachedModule, storeModule } from './compiled-cache.ts';

type Esbuild = typeof import('esbuild');

/** esbuild's service stops this long after the last compile (a reload or start loads several modules). */
const SERVICE_IDLE_MS = 2_000;

const IMPORT_META = /\bimport\.meta\.(url|dirname|filename)\b/g;
const LOCAL_SOURCE = /\.(ts|mts|cts|tsx|js|mjs|jsx)$/;

let esbuild: Promise<Esbuild> | undefined;
let stopTimer: NodeJS.Timeout | undefined;
let sourceMapsOn = false;

/** esbuild beside organism, or in the user's project. */
function loadEsbuild(forModule: string): Promise<Esbuild> {
  esbuild ??= (async () => {
    try {
      return (await import('esbuild')) as Esbuild;
    } catch {
      try {
        return createRequire(forModule)('esbuild') as Esbuild;
      } catch {
        throw new ListenerLoadError(
          forModule,
          'is TypeScript, which needs esbuild in the project: `npm install --save-dev esbuild` (or write the module in JavaScript)',
        );
      }
    }
  })();
  // Not remembered when it failed: installing esbuild and reloading works without a restart.
  esbuild.catch(() => {
    esbuild = undefined;
  });
  return esbuild;
}

let keepWarm = false;

/**
 * `organism dev`: esbuild's service is kept running between compiles instead of stopping 2 s after
 * the last one, so a save does not wait for it to start again (~1 s on a busy machine; a compile
 * with it running takes tens of ms). It costs the service's process for as long as dev runs.
 */
export function keepCompilerWarm(): void {
  keepWarm = true;
  clearTimeout(stopTimer);
}

function idleStop(api: Esbuild): void {
  clearTimeout(stopTimer);
  if (keepWarm) return;
  stopTimer = setTimeout(() => void api.stop(), SERVICE_IDLE_MS);
  stopTimer.unref();
}

/**
 * Compiles `absPath` with its local imports into one ES module (or takes it from the cache) and
 * imports it. `cache: false` always compiles and keeps nothing: a signed tool module must run as
 * the source the manifest hashes, not a compiled copy anyone who writes node_modules can change.
 */
export function importTypescriptModule(
  absPath: string,
  options: { cache?: boolean } = {},
): Promise<Record<string, unknown>> {
  // Two listeners with one handler module load it at once: one compile, one module for both
  // (two compiles writing one output file let the first import read it half written).
  const key = `${options.cache === false ? 'nocache' : 'cache'}:${absPath}`;
  let loading = inFlight.get(key);
  if (loading === undefined) {
    loading = load(absPath, options).finally(() => inFlight.delete(key));
    inFlight.set(key, loading);
  }
  return loading;
}

/** Imports under way, by cache mode and path; an import after one settles starts anew (a reload). */
const inFlight = new Map<string, Promise<Record<string, unknown>>>();
let compiles = 0;

/** How many times esbuild compiled a module in this process (for tests and diagnostics). */
export function typescriptModuleStats(): { compiles: number } {
  return { compiles };
}

async function load(absPath: string, options: { cache?: boolean }): Promise<Record<string, unknown>> {
  const cache = options.cache === false ? undefined : cacheDir(absPath);
  const hit = cache === undefined ? undefined : await cachedModule(cache, absPath);
  if (hit !== undefined) {
    enableSourceMaps();
    try {
      return (await import(pathToFileURL(hit).href)) as Record<string, unknown>;
    } catch {
      // A package it imports moved or went away since: compile again below.
    }
  }
  const api = await loadEsbuild(absPath);
  clearTimeout(stopTimer);
  let compiled: { code: string; inputs: string[] };
  try {
    compiled = await compile(api, absPath);
  } finally {
    idleStop(api);
  }
  enableSourceMaps();
  const stored =
    cache === undefined ? undefined : await storeModule(cache, absPath, compiled.code, compiled.inputs);
  if (stored !== undefined) return (await import(pathToFileURL(stored).href)) as Record<string, unknown>;
  const file = join(
    outputDir(),
    `${basename(absPath)}.${createHash('sha256').update(compiled.code).digest('hex').slice(0, 16)}.mjs`,
  );
  await writeFile(file, compiled.code, { mode: 0o600 });
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } finally {
    await rm(file, { force: true });
  }
}

/** Stack traces through the source maps: the user's file:line, not the compiled file's. */
function enableSourceMaps(): void {
  if (sourceMapsOn) return;
  process.setSourceMapsEnabled(true);
  sourceMapsOn = true;
}

let dir: string | undefined;

/** This process's own folder for compiled modules (0700: no other user can put a file there). */
function outputDir(): string {
  if (dir === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'organism-modules-'));
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    dir = made;
  }
  return dir;
}

async function compile(api: Esbuild, absPath: string): Promise<{ code: string; inputs: string[] }> {
  compiles++;
  const result = await api.build({
    entryPoints: [absPath],
    absWorkingDir: dirname(absPath),
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    // As Node resolves: `main`, not the `module` field Node never reads; and no tsconfig `paths`
    // (a compile-time alias Node never applies: in this repository it maps 'organism' to src/).
    mainFields: ['main'],
    tsconfigRaw: {},
    sourcemap: 'external',
    sourcesContent: false,
    outfile: `${absPath}.organism.mjs`,
    logLevel: 'silent',
    metafile: true,
    plugins: [
      {
        name: 'organism-user-module',
        setup(build) {
          // A package is imported by Node from where Node would find it, not copied in.
          build.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.pluginData === 'organism-resolve' || args.path.startsWith('node:')) return undefined;
            const found = await build.resolve(args.path, {
              kind: args.kind,
              resolveDir: args.resolveDir,
              importer: args.importer,
              pluginData: 'organism-resolve',
            });
            if (found.errors.length > 0) return { errors: found.errors };
            if (found.external || !found.path.startsWith('/')) return { path: args.path, external: true };
            return { path: pathToFileURL(found.path).href, external: true };
          });
          // import.meta in a bundled file means that file, not the bundle.
          build.onLoad({ filter: LOCAL_SOURCE }, async (args) => {
            if (args.path.includes('/node_modules/')) return undefined;
            const text = await readFile(args.path, 'utf8');
            const url = pathToFileURL(args.path).href;
            const values: Record<string, string> = { url, dirname: dirname(args.path), filename: args.path };
            const contents = text.replace(IMPORT_META, (_, key: string) => JSON.stringify(values[key]));
            const ext = args.path.slice(args.path.lastIndexOf('.') + 1);
            const loader = ext === 'mts' || ext === 'cts' ? 'ts' : ext === 'mjs' ? 'js' : ext;
            return { contents, loader: loader as 'ts' | 'tsx' | 'js' | 'jsx' };
          });
        },
      },
    ],
  });
  const js = result.outputFiles.find((file) => file.path.endsWith('.mjs'));
  const map = result.outputFiles.find((file) => file.path.endsWith('.map'));
  if (!js || !map) throw new ListenerLoadError(absPath, 'esbuild produced no output');
  // Sources as absolute file URLs: relative ones cannot be resolved against a data: URL.
  const sourceMap = JSON.parse(map.text) as { sources: string[]; sourceRoot?: string };
  const base = pathToFileURL(`${dirname(absPath)}/`);
  sourceMap.sources = sourceMap.sources.map((source) => new URL(source, base).href);
  delete sourceMap.sourceRoot;
  const body = js.text.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n');
  const inline = Buffer.from(JSON.stringify(sourceMap)).toString('base64');
  const code = `${body}//# sourceMappingURL=data:application/json;base64,${inline}\n`;
  // The local files compiled in (packages stay outside): what the cache checks for edits.
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((path) => !path.includes('node_modules/'))
    .map((path) => resolve(dirname(absPath), path));
  return { code, inputs };
}
