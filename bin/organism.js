#!/usr/bin/env node
// Entry point for the `organism` command. tsx's loader lets the CLI and users' listener modules be
// TypeScript with no build step to remember.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
