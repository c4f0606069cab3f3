#!/usr/bin/env node
// Entry point for the `organism` command: runs the compiled JavaScript in dist/ (`npm run build`,
// which `prepare` runs on an install from git and on `npm pack`). tsx is never loaded here: only a
// user's own TypeScript listener or tool module loads it, when it is imported.
//
// V8 flags come first, before anything else loads: src/daemon/v8-flags.ts says which and why
// (organism.optimize_for: memory, the default, until organism.yaml is read).
import { existsSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Node 22.1 and later keep V8's compiled code of the modules that follow between starts (~10 % of
// a default daemon's start-up CPU on Node 24); Node 20 has no compile cache, and nothing happens.
// In this user's own cache folder, not Node's default under the temp folder, which other users may
// write: code left there by another user would run in this process. NODE_COMPILE_CACHE, when set,
// is Node's own and wins; NODE_DISABLE_COMPILE_CACHE=1 turns it off. A folder that cannot be made
// only means no cache (enableCompileCache reports it, it does not throw).
function compileCacheDir() {
  try {
    return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'organism', 'node');
  } catch {
    return undefined; // no home folder to be found: no cache
  }
}
const compileCache = compileCacheDir();
if (compileCache !== undefined) module.enableCompileCache?.(compileCache);

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'organism: dist/ is missing: this checkout has not been built. Run `npm run build` (npm install runs it too).\n',
  );
  process.exit(1);
}
const { applyV8Flags } = await import(new URL('../dist/src/daemon/v8-flags.js', import.meta.url).href);
applyV8Flags('memory');
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
