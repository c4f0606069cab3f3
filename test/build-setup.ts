/**
 * Tests that start the daemon the way a user does (`bin/organism.js`, `npm start`, `npx organism`)
 * run the compiled package in dist/. This rebuilds it first when the sources changed since it was
 * built, so those tests always run the code under test. Tests that import src/ directly do not
 * need it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function setup(): void {
  const build = fileURLToPath(new URL('../bin/build.js', import.meta.url));
  const result = spawnSync(process.execPath, [build, '--if-stale'], { stdio: 'inherit' });
  // A type error elsewhere in the tree still leaves a runnable dist/ (tsc emits anyway): the
  // typecheck reports it; the tests run.
  if (
    result.status !== 0 &&
    !existsSync(fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url)))
  ) {
    throw new Error('test setup: `node bin/build.js` failed and left no dist/; see its output above');
  }
}
