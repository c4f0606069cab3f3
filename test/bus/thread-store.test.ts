/**
 * The ThreadStore contract (thread-store.contract.ts) against both stores: the in-process one and
 * the Redis one on the real redis-server at 127.0.0.1:6379.
 */
import { randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import { ThreadHistory } from '../../src/bus/history/memory.ts';
import { LocalThreadStore } from '../../src/bus/thread-store.ts';
import { ThreadRegistry } from '../../src/bus/threads.ts';
import { until } from '../../src/testing/index.ts';
import { dropGroup } from '../e2e/redis-support/harness.ts';
import { storeOnRedis } from './redis-store-daemon.ts';
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

async function redisDaemon(): Promise<StoreDaemon> {
  const { transport, store, registry, history } = storeOnRedis(URL, GROUP);
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
