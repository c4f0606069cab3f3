#!/usr/bin/env node
// `npm run qt3 -- <qt3-dir>`: the W3C QT3 conformance run of the librarian (bench/qt3/main.ts).
import { register } from 'tsx/esm/api';

register();
const { parseOptions, runQt3 } = await import('../bench/qt3/main.ts');
const options = parseOptions(process.argv.slice(2));
if (typeof options === 'string') {
  process.stderr.write(`${options}\n`);
  process.exit(2);
}
// stdout carries only the figures: anything else written there (fn:trace in a test case, printed by
// the query thread) goes to stderr.
const out = process.stdout.write.bind(process.stdout);
// A reader that stops early (`| head`) ends the run quietly.
process.stdout.on('error', (error) => process.exit(error.code === 'EPIPE' ? 0 : 1));
process.stdout.write = process.stderr.write.bind(process.stderr);
await runQt3({ ...options, write: (line) => out(`${line}\n`) });
