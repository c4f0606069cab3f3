/**
 * `npm run bench`: runs each benchmark module and prints one JSON object per line. Each module
 * measures its figure and, where the issue asks for one, a floor in the same run.
 * `npm run bench -- daemon tools` runs only the modules named.
 */
const MODULES = [
  './pipeline.ts',
  './recency.ts',
  './durability.ts',
  './guard.ts',
  './tools.ts',
  './audit.ts',
  './mcp.ts',
  './sandbox.ts',
  './redis.ts',
  './telemetry.ts',
  './daemon.ts',
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
