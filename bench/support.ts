/** Small helpers shared by benchmarks: percentiles, timing, a child-process runner for clean RSS. */
import { spawn } from 'node:child_process';
import { cpSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Runs `fn` repeatedly for about `ms` milliseconds (after a warm-up) and returns operations per second. */
export function opsPerSecond(fn: () => void, ms = 1_000): number {
  for (let i = 0; i < 2_000; i++) fn();
  let ops = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 200; i++) fn();
    ops += 200;
    now = process.hrtime.bigint();
  }
  return ops / (Number(now - start) / 1e9);
}

/**
 * The V8 flags the in-process RSS and two-daemon throughput benches run their children with. The
 * daemon itself sets its own flags in bin/organism.js (in-process, so every way of starting it
 * gets them); bench/daemon.ts measures it started as a user starts it.
 */
export const DAEMON_NODE_FLAGS = ['--max-semi-space-size=4', '--single-threaded-gc'];

/**
 * Runs a TypeScript file in a fresh Node process (so its RSS is its own) and returns its stdout.
 * The file is bundled to plain JavaScript first: under the TypeScript loader, Node 20 runs module
 * hooks on a second thread that alone adds ~35 MB, which would measure the loader, not Organism.
 */
export async function runChild(
  relativeFile: string,
  args: string[] = [],
  nodeFlags: readonly string[] = DAEMON_NODE_FLAGS,
): Promise<string> {
  const { build } = await import('esbuild');
  const file = fileURLToPath(new URL(relativeFile, import.meta.url));
  const outfile = fileURLToPath(
    new URL(`../node_modules/.cache/organism-bench/${basename(file, '.ts')}.mjs`, import.meta.url),
  );
  await build({
    entryPoints: [file],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile,
    logLevel: 'error',
  });
  // The Lua scripts are read relative to the module that loads them (src/bus/transport/redis/scripts.ts,
  // src/tools/shared-state.ts: ./lua/<name>.lua), which in the bundle is the bundle itself.
  for (const dir of ['../src/bus/transport/redis/lua', '../src/tools/lua']) {
    cpSync(fileURLToPath(new URL(dir, import.meta.url)), join(dirname(outfile), 'lua'), { recursive: true });
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', ...nodeFlags, outfile, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${relativeFile} exited ${code}`)),
    );
  });
}

/** RSS of a bare `node` process, the least any Node program costs, measured in the same run. */
export function bareNodeRssMb(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', 'process.stdout.write(String(process.memoryUsage().rss))'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.on('error', reject);
    child.on('exit', () => resolve(Math.round((Number(out) / 1048576) * 10) / 10));
  });
}

/** The middle value (the mean of the two middle ones for an even count): the figure of a run taken in turns. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Waits `ms` milliseconds; a deadline already past waits not at all. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
