/**
 * What the bus runs on, as ./factory.ts builds it from organism.yaml: a transport and, when several
 * daemons share the organism, the shared thread store and what the API shows of the Redis side. A
 * leaf of types, so the factory and each implementation import it without importing each other.
 */
import type { Registry } from 'prom-client';
import type { ThreadStore } from '../thread-store.ts';
import type { RedisTransport } from './redis/transport.ts';
import type { Transport } from './types.ts';

export interface BusBackend {
  transport: Transport;
  /** What the Bus takes as `threadStore`: a LocalThreadStore, or with redis the shared one. */
  threadStore: ThreadStore;
  /** Present with the redis transport: dead letters and counters for the API and metrics. */
  redis?: RedisTransport;
  /** Releases what the bus does not close itself (call after Bus.stop()). */
  close(): Promise<void>;
}

export interface BusBackendOptions {
  /** Prometheus registry for the redis bus gauges (dead letters, claims, acks). */
  metrics?: Registry;
  /**
   * How long closing the redis transport may take after the drain, ms (RedisBusOptions'
   * closeTimeoutMs): the daemon keeps its whole shutdown within drain_timeout_ms + 2 s.
   */
  closeTimeoutMs?: number;
}
