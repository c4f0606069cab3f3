/**
 * The Redis transport's harness for the shared Transport contract (transport.contract.ts), for one
 * Redis or a Redis Cluster, with one partition or several: redis-transport.test.ts runs it on one
 * Redis as the default organism has it, redis-partitions.test.ts with partitions and on a cluster.
 */
import type { Redis } from 'ioredis';
import { RedisTransport } from '../../src/bus/transport/redis/index.ts';
import type { Transport } from '../../src/bus/transport/types.ts';
import type { TransportHarness } from './transport.contract.ts';

export interface RedisHarnessOptions {
  url: string;
  /** Consumer groups are `<run>-<n>`. */
  run: string;
  partitions?: number;
  /** A client that can read every key of the transport (a Cluster client on a cluster). */
  raw: Redis;
}

export function openTransport(
  o: Pick<RedisHarnessOptions, 'url' | 'partitions'>,
  group: string,
  consumer: string,
  maxDeliveries = 3,
  closeTimeoutMs = 5_000,
): RedisTransport {
  return new RedisTransport({
    url: o.url,
    group,
    consumer,
    partitions: o.partitions,
    blockMs: 200,
    claimIdleMs: 300,
    reaperIntervalMs: 100,
    heartbeatMs: 100,
    maxDeliveries,
    closeTimeoutMs,
    ...(process.env.ORGANISM_TEST_DEBUG
      ? { logger: { info: console.log, warn: console.log, error: console.log } as never }
      : {}),
  });
}

const asRedis = (t: Transport) => t as RedisTransport;

export function redisHarness(o: RedisHarnessOptions): TransportHarness {
  let groups = 0;
  return {
    fresh: async () => openTransport(o, `${o.run}-${++groups}`, `c-${groups}`),
    peer: async (of, options = {}) =>
      openTransport(
        o,
        asRedis(of).options.group,
        options.consumer ?? asRedis(of).consumer,
        options.maxDeliveries,
      ),
    unacked: async (of, listener) => {
      const t = asRedis(of);
      let sum = 0;
      for (let p = 0; p < t.keys.partitions; p++) {
        // A partition whose reader has not made the group yet holds nothing.
        const summary = (await o.raw
          .call('XPENDING', t.keys.inbox(listener, p), t.options.group)
          .catch((error: Error) => {
            if (/NOGROUP/.test(error.message)) return [0];
            throw error;
          })) as [number];
        sum += Number(summary[0]);
      }
      return sum;
    },
    crash: async (t) => {
      // A crash: connections dropped without waiting for, or acknowledging, work in flight.
      const r = asRedis(t);
      (r.options as { closeTimeoutMs: number }).closeTimeoutMs = 0;
      await r.close();
    },
    deadLetters: async (of) =>
      (await asRedis(of).deadLetters()).map((d) => ({
        listener: d.listener,
        messageId: d.message?.id,
        reason: d.reason,
      })),
    capabilities: { boundedInFlight: true, redelivery: true, orderPerThread: (o.partitions ?? 1) > 1 },
  };
}
