/**
 * `npm run bench`: runs each benchmark module and prints one JSON object per line. Each module
 * measures its figure and, where the issue asks for one, a floor in the same run.
 */
const MODULES = [
  './pipeline.ts',
  './durability.ts',
  './guard.ts',
  './tools.ts',
  './mcp.ts',
  './sandbox.ts',
  './redis.ts',
];

for (const path of MODULES) {
  const mod = (await import(path)) as { run(): AsyncIterable<Record<string, unknown>> };
  for await (const line of mod.run()) process.stdout.write(`${JSON.stringify(line)}\n`);
}
