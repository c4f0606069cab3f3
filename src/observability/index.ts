/** Metrics (prom-client) and logs (pino) of the daemon. */
export { createLogger, LOG_REDACT_PATHS, type LoggerOptions } from './logger.ts';
export {
  type BusGaugeSample,
  metrics,
  metricsRegistry,
  recordDelivery,
  renderMetrics,
  sampleBusGauges,
} from './metrics.ts';
