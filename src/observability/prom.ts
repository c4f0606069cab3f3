/**
 * The parts of prom-client the daemon uses, required file by file instead of through its index:
 * the index also loads the Summary (tdigest, bintrees), the Pushgateway, the cluster aggregator
 * (node:cluster) and, through the default metrics' process CPU counters, @opentelemetry/api (45
 * files, for exemplars the daemon never turns on): ~40-100 ms of every start on a 2-core machine,
 * for nothing a default daemon uses. The classes are the index's own (a require of the same
 * files), so a module importing 'prom-client' (the Redis transport's gauges) registers with them.
 *
 * The default metrics are prom-client's, one module each, except the process CPU counters: the
 * same three series, written here without exemplars (so without OpenTelemetry). A leaf module.
 */
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry = require('prom-client/lib/registry') as typeof Prom.Registry;
export const Counter = require('prom-client/lib/counter') as typeof Prom.Counter;
export const Gauge = require('prom-client/lib/gauge') as typeof Prom.Gauge;
export const Histogram = require('prom-client/lib/histogram') as typeof Prom.Histogram;

type DefaultMetric = (registry: Prom.Registry, config: Record<string, unknown>) => void;

/** prom-client's default metrics (lib/defaultMetrics.js's list) but its process CPU counters. */
const DEFAULT_METRICS = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  // As prom-client: only where Node has process.getActiveResourcesInfo.
  ...(typeof (process as { getActiveResourcesInfo?: unknown }).getActiveResourcesInfo === 'function'
    ? ['processResources']
    : []),
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
];

/** What prom-client's collectDefaultMetrics({ register }) registers, with the same names and help. */
export function collectDefaultMetrics(registry: Prom.Registry): void {
  processCpuTotal(registry);
  // prom-client's own default: event loop delay sampled every 10 ms.
  const config = { eventLoopMonitoringPrecision: 10 };
  for (const name of DEFAULT_METRICS)
    (require(`prom-client/lib/metrics/${name}`) as DefaultMetric)(registry, config);
}

/** process_cpu_*_seconds_total as prom-client counts them: CPU used since they were registered. */
function processCpuTotal(registry: Prom.Registry): void {
  const registers = [registry];
  let last = process.cpuUsage();
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    // This one metric's collect sets all three, as prom-client's does.
    collect() {
      const now = process.cpuUsage();
      const userMicros = now.user - last.user;
      const systemMicros = now.system - last.system;
      last = now;
      user.inc(userMicros / 1e6);
      system.inc(systemMicros / 1e6);
      total.inc((userMicros + systemMicros) / 1e6);
    },
  });
  const system = new Counter({
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
    registers,
  });
  const total = new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers,
  });
}
