#!/usr/bin/env node
// Entry point for the `organism` command: runs the compiled JavaScript in dist/ (`npm run build`,
// which `prepare` runs on an install from git and on `npm pack`). tsx is never loaded here: only a
// user's own TypeScript listener or tool module loads it, when it is imported.
//
// V8 flags are set here, in the process, rather than in the shebang, so `organism run`,
// `npx organism run`, `npm start` and `node bin/organism.js run` run alike. Both are read by V8
// as it goes, so they take effect set after start (bench/daemon.ts measures the result):
// - a young generation that does not grow past V8's initial 2 MB keeps a long-running daemon's idle
//   RSS ~20 MB lower (start-up otherwise grows it to 32 MB, which stays committed while idle);
// - --optimize-for-size (V8's memory-over-speed trade-offs) takes ~8 MB more off the idle daemon.
//   What it costs in speed is not measured: the throughput benches run the bus in their own process.
// - a function is optimized (TurboFan) after 4x V8's default interrupt budget (132 KB of bytecode
//   run): start-up code (the YAML parser, module loading, ajv compiling listeners' payload
//   schemas) runs warm but not for long, and optimizing it cost ~5 MB of idle RSS (compiler
//   memory kept by the allocator of the compiler's threads) and start time on a busy machine;
//   code that stays hot (the bus, the XML codec) is still optimized, a little later. Read when a
//   function first runs, so it applies to everything loaded after this line.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');
setFlagsFromString('--optimize-for-size');
setFlagsFromString('--interrupt-budget=540672');

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'organism: dist/ is missing: this checkout has not been built. Run `npm run build` (npm install runs it too).\n',
  );
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
