#!/usr/bin/env node
// Entry point for the `organism` command: runs the compiled JavaScript in dist/ (`npm run build`,
// which `prepare` runs on an install from git and on `npm pack`). tsx is never loaded here: only a
// user's own TypeScript listener or tool module loads it, when it is imported.
//
// V8 flags are set here, in the process, rather than in the shebang, so `organism run`,
// `npx organism run`, `npm start` and `node bin/organism.js run` run alike. A young generation
// that does not grow past V8's initial 2 MB keeps a long-running daemon's idle RSS ~20 MB lower
// (start-up otherwise grows it to 32 MB, which stays committed while idle). It can be set after
// start because V8 reads it each time the young generation would grow (bench/daemon.ts measures it).
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'organism: dist/ is missing: this checkout has not been built. Run `npm run build` (npm install runs it too).\n',
  );
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
