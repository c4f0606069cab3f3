/**
 * One daemon's thread state on the real redis-server at 127.0.0.1:6379, below the bus: a
 * transport, its RedisThreadStore, and a registry and history written through to it, as the
 * daemon wires them (src/bus/transport/redis/backend.ts). For the thread-store tests.
 */
import pino from 'pino';
import { ThreadHistory } from '../../src/bus/history/memory.ts';
import { ThreadRegistry } from '../../src/bus/threads.ts';
import { RedisTransport } from '../../src/bus/transport/redis/index.ts';
import { RedisThreadStore } from '../../src/bus/transport/redis/thread-store.ts';

export interface RedisStoreDaemon {
  transport: RedisTransport;
  store: RedisThreadStore;
  registry: ThreadRegistry;
  history: ThreadHistory;
}

/** Not yet receiving the other daemons' events: wait for `store.receivingEvents`. */
export function storeOnRedis(url: string, group: string): RedisStoreDaemon {
  const transport = new RedisTransport({ url, group, logger: pino({ level: 'silent' }) });
  const store = new RedisThreadStore({
    client: transport.client,
    batch: transport.batch,
    url,
    keys: transport.keys,
    origin: transport.consumer,
    idleMs: 60_000,
    maxHistoryPerThread: 100,
  });
  transport.useThreadStore(store);
  const registry = new ThreadRegistry({ maxHops: 100, maxDepth: 10, idleMs: 60_000, observer: store });
  const history = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
  store.attach(registry, history, { idle: () => {}, stopped: () => {} });
  return { transport, store, registry, history };
}
