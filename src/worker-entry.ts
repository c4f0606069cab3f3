/**
 * The code a worker thread of this package starts with (`new Worker(code, { eval: true })`): it
 * imports the worker's module. Compiled (dist/), the module is plain JavaScript and starts as it
 * is. From source (tests, a checkout run through tsx) it is TypeScript, and tsx's loader is
 * registered in the worker first: a worker does not inherit programmatic loader hooks. tsx is
 * resolved only then, so the published package never loads it for its own code. A module that
 * fails to load ends the worker with exit code 70.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { COMPILED } from './package-root.ts';

/** `entry`: the module's URL (its extension MODULE_EXT). */
export function workerSource(entry: string): string {
  return COMPILED
    ? `import(${JSON.stringify(entry)}).catch((error) => { console.error(error); process.exit(70); });`
    : `import(${JSON.stringify(tsxApiUrl())})
  .then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })
  .catch((error) => { console.error(error); process.exit(70); });`;
}

function tsxApiUrl(): string {
  const root = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  return pathToFileURL(join(root, 'dist/esm/api/index.mjs')).href;
}
