#!/usr/bin/env -S node --max-semi-space-size=4 --single-threaded-gc
// --max-semi-space-size=4 (MB): a smaller young generation keeps a long-running daemon's RSS low
// (V8's default grows it to 3 x 16 MB under steady traffic). --single-threaded-gc: V8's helper
// GC threads otherwise compete for the cores the daemon shares with Redis and other daemons
// (two daemons and Redis on two cores moved ~6% more messages without them). bench/ measures
// with the same flags.
// Entry point for the `organism` command. tsx's loader lets the CLI and users' listener modules be
// TypeScript with no build step to remember.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
