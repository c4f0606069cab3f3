/**
 * GET /metrics/series: messages per second and mean hop latency over the last minutes, one point
 * per interval (the dashboard's overview charts). One series per process, like the counters it
 * reads; it starts when the first API is built.
 */
import { TrafficSeries } from '../dashboard/series.ts';
import { type ApiApp, allow } from './common.ts';

let shared: TrafficSeries | undefined;

export function seriesRoutes(app: ApiApp): void {
  shared ??= new TrafficSeries().start();
  const series = shared;
  app.get('/api/v1/metrics/series', (c) => {
    allow(c, 'viewer', 'reading metrics');
    return c.json({ interval_ms: series.intervalMs, points: series.points() });
  });
}
