/**
 * `npm run bench`: runs each benchmark module and prints one JSON object per line. Each module
 * measures its figure and, where the issue asks for one, a floor in the same run.
 * `npm run bench -- daemon tools` runs only the modules named.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The audit key and the audit checkpoints live under $XDG_CONFIG_HOME/organism by default: the
// benchmarks' throwaway organisms (and the daemons they start) get a throwaway one, as the tests
// do, so a bench run leaves nothing in the developer's own ~/.config/organism.
const configHome = mkdtempSync(join(tmpdir(), 'organism-bench-config-'));
process.env.XDG_CONFIG_HOME = configHome;
process.on('exit', () => rmSync(configHome, { recursive: true, force: true }));

const MODULES = [
  './pipeline.ts',
  './recency.ts',
  './durability.ts',
  './guard.ts',
  './tools.ts',
  './librarian.ts',
  './audit.ts',
  './mcp.ts',
  './sandbox.ts',
  './redis.ts',
  './redis-cluster.ts',
  './telemetry.ts',
  './daemon.ts',
  './threads.ts',
];

const only = process.argv.slice(2);
const unknown = only.filter((name) => !MODULES.includes(`./${name}.ts`));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: no module ${unknown.join(', ')}; known: ${MODULES.map((m) => m.slice(2, -3)).join(', ')}\n`,
  );
  process.exit(2);
}

for (const path of MODULES) {
  if (only.length > 0 && !only.includes(path.slice(2, -3))) continue;
  const mod = (await import(path)) as { run(): AsyncIterable<Record<string, unknown>> };
  for await (const line of mod.run()) process.stdout.write(`${JSON.stringify(line)}\n`);
}
