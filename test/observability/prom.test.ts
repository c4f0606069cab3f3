/**
 * The daemon's default metrics (src/observability/prom.ts) are prom-client's: the same series, with
 * the same help and type, as its collectDefaultMetrics registers; the process CPU counters count.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { collectDefaultMetrics, Registry } from '../../src/observability/prom.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROM = pathToFileURL(fileURLToPath(new URL('../../src/observability/prom.ts', import.meta.url))).href;

async function series(registry: promClient.Registry) {
  const metrics = await registry.getMetricsAsJSON();
  return metrics
    .map((m) => ({ name: m.name, help: m.help, type: m.type }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

describe('the default metrics', () => {
  it("are prom-client's collectDefaultMetrics series", async () => {
    const ours = new Registry();
    collectDefaultMetrics(ours);
    const theirs = new promClient.Registry();
    promClient.collectDefaultMetrics({ register: theirs });
    expect(await series(ours)).toEqual(await series(theirs));
  });

  it('count the CPU used since they were registered', async () => {
    const registry = new Registry();
    collectDefaultMetrics(registry);
    const until = performance.now() + 50;
    while (performance.now() < until); // CPU to count
    const text = await registry.metrics();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(value('process_cpu_seconds_total')).toBeCloseTo(
      value('process_cpu_user_seconds_total') + value('process_cpu_system_seconds_total'),
      6,
    );
  });

  it("are prom-client's own classes", () => {
    // In a Node process of its own, as the daemon loads them: in the suite's shared module graph
    // (vitest.config.ts) the package's index may reach this file through another loader, and a
    // full run once found two Registry classes where a process has one.
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx/esm',
        '--input-type=module',
        '-e',
        `const ours = await import(${JSON.stringify(PROM)});
const theirs = await import('prom-client');
console.log(JSON.stringify(['Registry', 'Counter', 'Gauge', 'Histogram'].map((name) => [name, ours[name] === theirs[name]])));`,
      ],
      { encoding: 'utf8', cwd: ROOT },
    );
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual([
      ['Registry', true],
      ['Counter', true],
      ['Gauge', true],
      ['Histogram', true],
    ]);
  });
});
