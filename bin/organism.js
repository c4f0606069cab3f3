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
// - a function is optimized later than V8's default, 8x later: start-up code (the YAML parser,
//   module loading, ajv compiling listeners' payload schemas) runs warm but not for long, and
//   optimizing it cost ~5 MB of idle RSS (compiler memory kept by the allocator of the compiler's
//   threads) and start time on a busy machine; code that stays hot (the bus, the XML codec) is
//   still optimized, a little later. Read when a function first runs, so it applies to everything
//   loaded after this line. V8 11.3 (Node 20) counts bytecode run (--interrupt-budget, default
//   66 KB); V8 11.8 and later (Node 21+) removed that flag for invocation counts per tier (Maglev,
//   TurboFan): an unknown flag is an error line on stderr at every start, so each V8 gets its own.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

const LATER = 8;
const [v8Major = 0, v8Minor = 0] = process.versions.v8.split('.').map(Number);
setFlagsFromString('--semi-space-growth-factor=1');
setFlagsFromString('--optimize-for-size');
if (v8Major < 11 || (v8Major === 11 && v8Minor < 8)) {
  setFlagsFromString(`--interrupt-budget=${67584 * LATER}`);
} else {
  // V8's defaults since 11.8 (unchanged through 13.6, Node 24): Maglev after 400 calls, TurboFan after 3000.
  setFlagsFromString(`--invocation-count-for-maglev=${400 * LATER}`);
  setFlagsFromString(`--invocation-count-for-turbofan=${3000 * LATER}`);
}

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'organism: dist/ is missing: this checkout has not been built. Run `npm run build` (npm install runs it too).\n',
  );
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
