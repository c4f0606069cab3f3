#!/usr/bin/env node
// Entry point for the `organism` command: runs the compiled JavaScript in dist/ (`npm run build`,
// run by `prepare` on install from git and by `prepack` for the published package). tsx is never
// loaded here: only a user's own TypeScript listener or tool module loads it, when it is imported.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'organism: dist/ is missing: this checkout has not been built. Run `npm run build` (npm install runs it too).\n',
  );
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
