/**
 * The ThreadStore contract (thread-store.contract.ts) against both stores: the in-process one and
 * the Redis one on the real redis-server at 127.0.0.1:6379.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll } from 'vitest';
import { ThreadHistory } from '../../src/bus/history/memory.ts';
import { LocalThreadStore } from '../../src/bus/thread-store.ts';
import { ThreadRegistry } from '../../src/bus/threads.ts';
import { RedisTransport } from '../../src/bus/transport/redis/index.ts';
import { RedisThreadStore } from '../../src/bus/transport/redis/thread-store.ts';
import { until } from '../../src/testing/index.ts';
import { dropGroup } from '../e2e/redis-support/harness.ts';
import { type StoreDaemon, threadStoreContract } from './thread-store.contract.ts';

const URL = 'redis://127.0.0.1:6379';
const GROUP = `organism-test-store-contract-${randomUUID().slice(0, 8)}`;

afterAll(async () => {
  await dropGroup(URL, GROUP);
});

const events = { idle: () => {}, stopped: () => {} };

function localDaemon(): StoreDaemon {
  const store = new LocalThreadStore();
  const registry = new ThreadRegistry({ maxHops: 100, maxDepth: 10, idleMs: 60_000 });
  const history = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
  store.attach(registry, history, events);
  return { store, registry, history, flush: async () => {}, close: () => store.close() };
}

/** A transport, its thread store, and a registry and history written through to it, as a daemon has them. */
async function redisDaemon(): Promise<StoreDaemon> {
  const transport = new RedisTransport({ url: URL, group: GROUP, logger: pino({ level: 'silent' }) });
  const store = new RedisThreadStore({
    client: transport.client,
    batch: transport.batch,
    url: URL,
    keys: transport.keys,
    origin: transport.consumer,
    idleMs: 60_000,
    maxHistoryPerThread: 100,
  });
  const registry = new ThreadRegistry({ maxHops: 100, maxDepth: 10, idleMs: 60_000, observer: store });
  const history = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
  store.attach(registry, history, events);
  await until(() => store.receivingEvents, 'the events subscription');
  return {
    store,
    registry,
    history,
    flush: () => transport.batch.drain(),
    close: async () => {
      await store.close();
      await transport.close();
    },
  };
}

threadStoreContract('local', {
  fresh: async () => localDaemon(),
  peer: async () => localDaemon(),
  shared: false,
});
threadStoreContract('redis', { fresh: redisDaemon, peer: redisDaemon, shared: true });
