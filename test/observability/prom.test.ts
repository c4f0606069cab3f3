/**
 * The daemon's default metrics (src/observability/prom.ts) are prom-client's: the same series, with
 * the same help and type, as its collectDefaultMetrics registers; the process CPU counters count.
 */
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from '../../src/observability/prom.ts';

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
    expect(Registry).toBe(promClient.Registry);
    expect(Counter).toBe(promClient.Counter);
    expect(Gauge).toBe(promClient.Gauge);
    expect(Histogram).toBe(promClient.Histogram);
  });
});
