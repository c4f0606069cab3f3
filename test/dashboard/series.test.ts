/** The overview's series: the change of the process's counters between two reads, bounded. */
import { describe, expect, it } from 'vitest';
import { recordPersonWait } from '../../src/observability/hop-samples.ts';
import { recordDelivery } from '../../src/observability/metrics.ts';
import { TrafficSeries } from '../../src/server/dashboard/series.ts';

describe('TrafficSeries', () => {
  it('turns counter changes into messages per second and mean hop latency, keeping the newest points', async () => {
    const series = new TrafficSeries({ intervalMs: 1000, keep: 2 });
    await series.sample(10_000);
    expect(series.points()).toEqual([]); // the first read is the base
    recordDelivery('a', 'ok', 20);
    recordDelivery('b', 'ok', 40);
    recordDelivery('b', 'busy', 0); // counted, no latency
    await series.sample(12_000);
    expect(series.points()).toEqual([
      {
        time: new Date(12_000).toISOString(),
        messages_per_second: 1.5,
        hop_latency_ms: 30,
        hop_p50_ms: 20,
        hop_p95_ms: 40,
      },
    ]);
    await series.sample(13_000);
    expect(series.points()[1]).toMatchObject({ messages_per_second: 0, hop_latency_ms: null });
    recordDelivery('a', 'ok', 10);
    await series.sample(14_000);
    const points = series.points();
    expect(points).toHaveLength(2);
    expect(points.map((p) => p.time)).toEqual([
      new Date(13_000).toISOString(),
      new Date(14_000).toISOString(),
    ]);
    expect(points[1]).toMatchObject({ messages_per_second: 1, hop_latency_ms: 10 });
  });

  it('hop percentiles leave out the time a call waited for a person (the mean keeps it)', async () => {
    const series = new TrafficSeries({ intervalMs: 1000 });
    await series.sample(20_000);
    const end = Date.now();
    // A hop of 4.1 s whose call waited 4 s for an approval inside it; 19 hops of 50 ms.
    recordPersonWait('t-waited', end - 4050, end - 50);
    recordDelivery('agent', 'ok', 4100, 't-waited');
    for (let i = 0; i < 19; i++) recordDelivery('code', 'ok', 50, `t-${i}`);
    await series.sample(22_000);
    const point = series.points()[0]!;
    expect(point.hop_latency_ms).toBeCloseTo((4100 + 19 * 50) / 20, 0);
    expect(point.hop_p50_ms).toBe(50);
    // The waited hop counts 100 ms of its own: the slowest, still far below 4 s.
    expect(point.hop_p95_ms).toBeGreaterThanOrEqual(50);
    expect(point.hop_p95_ms).toBeLessThanOrEqual(110);
  });

  it('refuses options that would spin or keep nothing', () => {
    expect(() => new TrafficSeries({ intervalMs: 0 })).toThrow(/intervalMs/);
    expect(() => new TrafficSeries({ keep: 0 })).toThrow(/keep/);
  });
});
