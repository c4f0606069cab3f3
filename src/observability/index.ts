/** Metrics (prom-client) and logs (pino) of the daemon. */
export { createLogger, LOG_REDACT_PATHS, type LogFormat, type LoggerOptions, logFormat } from './logger.ts';
export {
  type BusGaugeSample,
  metrics,
  metricsRegistry,
  recordDelivery,
  renderMetrics,
  sampleBusGauges,
} from './metrics.ts';
