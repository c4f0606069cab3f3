/**
 * The Redis key/value store (organism.yaml `kv.url`), through ioredis. Keys are
 * `<keyPrefix><namespace>:<key>` (prefix `organism:kv:` by default), values are JSON text, a ttl is
 * Redis's own EX so expiry needs nothing from us.
 *
 * A down server must fail a tool call quickly and clearly, not hang it: the client connects on
 * first use (lazyConnect), gives up a connection attempt after `connectTimeoutMs`, and fails a
 * command after one reconnect (maxRetriesPerRequest: 1); it keeps reconnecting in the background,
 * so the store recovers by itself when the server is back. Errors name host:port, never the URL,
 * which may carry a password.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { KvError } from '../errors.ts';
import { createRedisClient } from '../redis-client.ts';
import { redisUrlPassword } from '../redis-url.ts';
import { redisAddress } from './address.ts';
import {
  checkKey,
  checkNamespace,
  checkTtl,
  DEFAULT_MAX_VALUE_BYTES,
  encodeValue,
  type KvStore,
} from './types.ts';

/** Where a Redis URL points, as `host:port`, with any user or password left out. */
export { redisAddress };

export interface RedisKvOptions {
  /** redis:// or rediss:// URL; may carry user, password and database number. */
  url: string;
  /** Prefix of every key. Default `organism:kv:`. */
  keyPrefix?: string;
  /** Largest JSON value in bytes. Default 16 MiB. */
  maxValueBytes?: number;
  /** How long one connection attempt may take. Default 2000 ms. */
  connectTimeoutMs?: number;
  /** How long one command may wait for its reply. Default 5000 ms. */
  commandTimeoutMs?: number;
}

function defaultOptions(options: RedisKvOptions): Required<RedisKvOptions> {
  const resolved = {
    keyPrefix: 'organism:kv:',
    maxValueBytes: DEFAULT_MAX_VALUE_BYTES,
    connectTimeoutMs: 2000,
    commandTimeoutMs: 5000,
    ...options,
  };
  // redis+cluster:// reaches here from bus.url (the kv store and runtime state follow the bus).
  if (!/^rediss?(\+cluster)?:\/\//.test(resolved.url)) {
    throw new KvError('kv.unavailable', 'kv.url must start with redis:// or rediss://');
  }
  if (!(resolved.maxValueBytes > 0)) throw new RangeError('maxValueBytes must be positive');
  if (!(resolved.connectTimeoutMs > 0)) throw new RangeError('connectTimeoutMs must be positive');
  if (!(resolved.commandTimeoutMs > 0)) throw new RangeError('commandTimeoutMs must be positive');
  return resolved;
}

/** Creates the store; no connection is made until the first call. */
export function openRedisKvStore(options: RedisKvOptions): KvStore {
  return new RedisKvStore(defaultOptions(options));
}

class RedisKvStore implements KvStore {
  readonly kind = 'redis' as const;
  readonly #opts: Required<RedisKvOptions>;
  readonly #client: Redis;
  readonly #address: string;
  readonly #secret: string | undefined;
  #lastConnectionError: Error | undefined;
  #closed: Promise<void> | undefined;

  constructor(opts: Required<RedisKvOptions>) {
    this.#opts = opts;
    this.#address = redisAddress(opts.url);
    this.#secret = redisUrlPassword(opts.url) || undefined;
    const clientOptions: RedisOptions = {
      lazyConnect: true,
      connectTimeout: opts.connectTimeoutMs,
      commandTimeout: opts.commandTimeoutMs,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    };
    // A Cluster client when the organism's bus.url names a Redis Cluster (its keys are single keys).
    this.#client = createRedisClient(opts.url, clientOptions, 'kv.url');
    // Without a listener ioredis prints every failed reconnect; we report failures per call instead.
    this.#client.on('error', (err: Error) => {
      this.#lastConnectionError = err;
    });
    this.#client.on('ready', () => {
      this.#lastConnectionError = undefined;
    });
  }

  async get(namespace: string, key: string): Promise<unknown | undefined> {
    const k = this.#redisKey(namespace, key);
    const text = await this.#run(() => this.#client.get(k));
    if (text === null) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new KvError(
        'kv.corrupt',
        `redis key ${JSON.stringify(k)} at ${this.#address} does not hold JSON`,
        {
          key: k,
        },
      );
    }
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds?: number): Promise<void> {
    const k = this.#redisKey(namespace, key);
    const ttl = checkTtl(ttlSeconds);
    const json = encodeValue(value, this.#opts.maxValueBytes);
    await this.#run(() =>
      ttl === undefined ? this.#client.set(k, json) : this.#client.set(k, json, 'EX', ttl),
    );
  }

  async setIfAbsent(namespace: string, key: string, value: unknown, ttlSeconds?: number): Promise<boolean> {
    const k = this.#redisKey(namespace, key);
    const ttl = checkTtl(ttlSeconds);
    const json = encodeValue(value, this.#opts.maxValueBytes);
    const reply = await this.#run(() =>
      ttl === undefined ? this.#client.set(k, json, 'NX') : this.#client.set(k, json, 'EX', ttl, 'NX'),
    );
    return reply === 'OK';
  }

  async delete(namespace: string, key: string): Promise<boolean> {
    const k = this.#redisKey(namespace, key);
    return (await this.#run(() => this.#client.del(k))) > 0;
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      if (this.#client.status === 'ready') {
        await this.#client.quit().catch(() => this.#client.disconnect());
      } else {
        // Not connected (never used, or the server is down): stop reconnecting right away.
        this.#client.disconnect();
      }
    })();
    return this.#closed;
  }

  #redisKey(namespace: string, key: string): string {
    if (this.#closed) throw new KvError('kv.closed', 'the kv store is closed');
    return `${this.#opts.keyPrefix}${checkNamespace(namespace)}:${checkKey(key)}`;
  }

  /** Runs one command, turning ioredis failures into KvErrors that name host:port only. */
  async #run<T>(command: () => Promise<T>): Promise<T> {
    if (this.#client.status === 'reconnecting' && this.#lastConnectionError) {
      // Known down: fail now rather than queue behind the reconnect backoff.
      throw this.#unavailable(this.#lastConnectionError.message);
    }
    try {
      return await command();
    } catch (err) {
      const e = err as Error;
      // A reply from the server (OOM, WRONGTYPE, ...) is the backend's own error; anything else is
      // the connection, where the connection error says more than "max retries reached".
      if (e.name === 'ReplyError' && !/^(NOAUTH|WRONGPASS)/.test(e.message)) {
        throw new KvError(
          'kv.backend',
          `redis at ${this.#address} refused the command: ${this.#scrub(e.message)}`,
          {
            address: this.#address,
          },
        );
      }
      throw this.#unavailable(this.#lastConnectionError?.message ?? e.message);
    }
  }

  #unavailable(reason: string): KvError {
    return new KvError(
      'kv.unavailable',
      `cannot reach the kv store at redis ${this.#address}: ${this.#scrub(reason)}`,
      {
        address: this.#address,
      },
    );
  }

  #scrub(text: string): string {
    return this.#secret ? text.split(this.#secret).join('***') : text;
  }
}
