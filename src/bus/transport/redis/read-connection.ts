/**
 * The connection a reader blocks on. A blocking XREADGROUP freezes the connection it runs on, so
 * each reader has one of its own. On one Redis that is a client of bus.url, which reconnects by
 * itself. On a cluster it is a plain connection to the master that serves the stream's slot, as
 * the transport's cluster client knows it, not a cluster client of its own: a new cluster client
 * starts by asking nodes at random (CLUSTER SLOTS, then its ready check's CLUSTER INFO, which has
 * no timeout), so one stalled master held up the readers of partitions it does not serve, taken
 * just before it stalled (test/bus/redis-cluster-failover.test.ts, "stalls past the lease TTL").
 * The node connection does not reconnect by itself: when it drops, or its node answers that the
 * slot is served elsewhere, the call fails (the reader's loop retries) and the next call opens a
 * connection to the node the slot map names by then.
 */
import type { Redis } from 'ioredis';
import { type ClusterView, createNodeClient, createRedisClient } from '../../../redis-client.ts';
import { busClientOptions, scrubUrl } from './connection.ts';
import type { ResolvedRedisBusOptions } from './options.ts';
import { keySlot } from './partitions.ts';

/** What runs a command: a client, or a reader's connection. */
export interface CommandRunner {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** Errors that say nothing about the connection (the reader handles them). */
const COMMAND_ERROR = /^(NOGROUP|BUSYGROUP)/;

export class ReadConnection implements CommandRunner {
  readonly #shared: Redis & ClusterView;
  readonly #options: ResolvedRedisBusOptions;
  readonly #stream: string;
  readonly #name: string;
  readonly #onError: (message: string) => void;
  readonly #onReconnect: () => void;
  #client: Redis | undefined;
  #readyOnce = false;
  #down = false;
  #closed = false;

  /**
   * `shared`: the transport's own client (its slot map names the node). `onReconnect`: the
   * connection is back after a drop, and entries read before may not have been acknowledged.
   */
  constructor(
    shared: Redis,
    options: ResolvedRedisBusOptions,
    stream: string,
    onError: (message: string) => void,
    onReconnect: () => void,
  ) {
    this.#shared = shared as Redis & ClusterView;
    this.#options = options;
    this.#stream = stream;
    this.#name = `organism-${options.consumer}-read`;
    this.#onError = onError;
    this.#onReconnect = onReconnect;
    if (!this.#shared.isCluster) this.#client = this.#watch(this.#openSingle());
  }

  /** The command on this connection; on a cluster, a failure other than the command's own drops it. */
  async call(command: string, ...args: string[]): Promise<unknown> {
    const client = this.#client ?? this.#openNode();
    try {
      return await client.call(command, ...args);
    } catch (error) {
      if (this.#shared.isCluster && !COMMAND_ERROR.test((error as Error).message)) {
        this.#drop(client);
        this.#shared.refreshSlotsCache?.();
      }
      throw error;
    }
  }

  /** Closes the connection at once: a blocked XREADGROUP is rejected instead of waiting out its BLOCK. */
  disconnect(): void {
    this.#closed = true;
    this.#client?.disconnect();
    this.#client = undefined;
  }

  #openSingle(): Redis {
    return createRedisClient(this.#options.url, {
      ...busClientOptions(this.#options.connectTimeoutMs, this.#name),
      lazyConnect: false,
    });
  }

  #openNode(): Redis {
    if (this.#closed) throw new Error('the read connection is closed');
    const node = this.#shared.slots?.[keySlot(this.#stream)]?.[0];
    if (!node) {
      this.#shared.refreshSlotsCache?.();
      throw new Error(`no node of the cluster is known to serve ${this.#stream} yet`);
    }
    const at = node.lastIndexOf(':');
    const client = createNodeClient({
      // The cluster's node options: credentials, TLS, name.
      ...this.#shared.options?.redisOptions,
      ...busClientOptions(this.#options.connectTimeoutMs, this.#name),
      host: node.slice(0, at),
      port: Number(node.slice(at + 1)),
      // No reconnecting to a node that may no longer serve the slot: the next call picks again.
      retryStrategy: () => null,
      reconnectOnError: () => false,
      lazyConnect: false,
    });
    this.#client = this.#watch(client);
    return client;
  }

  /** Reports trouble once per outage, not per node connection tried while it lasts. */
  #watch(client: Redis): Redis {
    client.on('error', (err: Error) => {
      if (!this.#down && !this.#closed) this.#onError(scrubUrl(err.message, this.#options.url));
      this.#down = true;
    });
    client.on('ready', () => {
      this.#down = false;
      if (this.#readyOnce) this.#onReconnect();
      this.#readyOnce = true;
    });
    return client;
  }

  #drop(client: Redis): void {
    if (this.#client === client) this.#client = undefined;
    client.disconnect();
  }
}
