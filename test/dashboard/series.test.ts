/** The overview's series: the change of the process's counters between two reads, bounded. */
import { describe, expect, it } from 'vitest';
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
      { time: new Date(12_000).toISOString(), messages_per_second: 1.5, hop_latency_ms: 30 },
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

  it('refuses options that would spin or keep nothing', () => {
    expect(() => new TrafficSeries({ intervalMs: 0 })).toThrow(/intervalMs/);
    expect(() => new TrafficSeries({ keep: 0 })).toThrow(/keep/);
  });
});
