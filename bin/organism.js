#!/usr/bin/env node
// Entry point for the `organism` command: runs the compiled JavaScript in dist/ (`npm run build`,
// which `prepare` runs on an install from git and on `npm pack`). tsx is never loaded here: only a
// user's own TypeScript listener or tool module loads it, when it is imported.
//
// V8 flags come first, before anything else loads: src/daemon/v8-flags.ts says which and why
// (organism.optimize_for: memory, the default, until organism.yaml is read).
import { existsSync } from 'node:fs';

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
