/**
 * ioredis clients for the bus. Commands wait out a Redis restart instead of failing
 * (maxRetriesPerRequest: null, offline queue on): a publish that cannot reach Redis is not
 * accepted until it can, and an ack sent while Redis is down is delivered when it is back, so a
 * restart loses nothing that was accepted. Reconnects back off up to two seconds and never stop.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { redisAddress } from '../../../kv/address.ts';
import { createRedisClient } from '../../../redis-client.ts';
import { redisUrlPassword } from '../../../redis-url.ts';

export interface BusConnection {
  client: Redis;
  /** host:port of the server, safe to log. */
  address: string;
  /** The connection failed and has not been ready since (Redis away): nothing sent now is answered soon. */
  readonly down: boolean;
}

export function busClientOptions(connectTimeoutMs: number, name: string): RedisOptions {
  return {
    connectionName: name,
    // RESP2 reply shapes: XREADGROUP as [[stream, entries]], the same as every Redis since 5.
    protocol: 2,
    connectTimeout: connectTimeoutMs,
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    // Off: what the bus sends per event-loop turn is already one script call (batch.ts), and an
    // auto-pipeline around a single command only costs time.
    enableAutoPipelining: false,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
    // A replica promoted after a failover answers READONLY until we reconnect to the new primary.
    reconnectOnError: (err) => /READONLY/.test(err.message),
  };
}

/**
 * Opens a client and reports its connection trouble through `onError` (once per outage, not per
 * retry). Without an 'error' listener ioredis would print every failed reconnect.
 */
export function openBusClient(
  url: string,
  options: RedisOptions,
  onError: (message: string) => void,
): BusConnection {
  // A Cluster for redis+cluster:// seed nodes (ioredis loaded on first use).
  const client = createRedisClient(url, { ...options, lazyConnect: false });
  let down = false;
  client.on('error', (err: Error) => {
    if (!down) onError(scrubUrl(err.message, url));
    down = true;
  });
  client.on('ready', () => {
    down = false;
  });
  return {
    client,
    address: redisAddress(url),
    get down() {
      return down;
    },
  };
}

/** Removes a password that a Redis URL may carry from a text. */
export function scrubUrl(text: string, url: string): string {
  const secret = redisUrlPassword(url);
  return secret ? text.split(secret).join('***') : text;
}
