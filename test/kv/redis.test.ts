/**
 * The Redis backend against the real redis-server on 127.0.0.1:6379 (CI starts it; never skipped).
 * Every key this file writes is under a prefix unique to this run and removed at the end.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createKvStore, type KvStore } from '../../src/kv/index.ts';
import { openRedisKvStore } from '../../src/kv/redis.ts';
import { configIn, removeTempDirs, tempDir } from './fixtures.ts';
import { kvContract } from './kv.contract.ts';

const URL = 'redis://127.0.0.1:6379';
const run = `organism-test:${randomUUID()}:`;
const prefixOf = new WeakMap<KvStore, string>();
let stores = 0;

const raw = new Redis(URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

afterAll(async () => {
  let cursor = '0';
  do {
    const [next, keys] = await raw.scan(cursor, 'MATCH', `${run}*`, 'COUNT', 1000);
    if (keys.length > 0) await raw.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await raw.quit();
  await removeTempDirs();
});

kvContract('redis', {
  async fresh(limits) {
    const keyPrefix = `${run}${++stores}:`;
    const store = openRedisKvStore({ url: URL, keyPrefix, ...limits });
    prefixOf.set(store, keyPrefix);
    return store;
  },
  async reopen(old) {
    const keyPrefix = prefixOf.get(old)!;
    const store = openRedisKvStore({ url: URL, keyPrefix });
    prefixOf.set(store, keyPrefix);
    return store;
  },
});

/** A port nothing listens on: bound once by us, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe('redis kv store', () => {
  const open: KvStore[] = [];
  const track = <T extends KvStore>(s: T) => {
    open.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('stores <prefix><namespace>:<key> as JSON text with the ttl as a Redis expiry', async () => {
    const keyPrefix = `${run}layout:`;
    const s = track(openRedisKvStore({ url: URL, keyPrefix }));
    await s.set('alice', 'k:1', { a: [1, 'x'] }, 60);
    await s.set('alice', 'forever', 'v');
    expect(await raw.get(`${keyPrefix}alice:k:1`)).toBe('{"a":[1,"x"]}');
    const ttl = await raw.ttl(`${keyPrefix}alice:k:1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
    expect(await raw.ttl(`${keyPrefix}alice:forever`)).toBe(-1);
  });

  it('uses the organism:kv: prefix when created from organism.yaml kv.url', async () => {
    const ns = `test-${randomUUID()}`;
    const s = track(await createKvStore(configIn(await tempDir(), { kv: { url: URL } })));
    expect(s.kind).toBe('redis');
    try {
      await s.set(ns, 'k', 42);
      expect(await raw.get(`organism:kv:${ns}:k`)).toBe('42');
    } finally {
      await raw.del(`organism:kv:${ns}:k`);
    }
  });

  it('reports a key that does not hold JSON as kv.corrupt', async () => {
    const keyPrefix = `${run}corrupt:`;
    await raw.set(`${keyPrefix}ns:k`, 'not json {');
    const s = track(openRedisKvStore({ url: URL, keyPrefix }));
    await expect(s.get('ns', 'k')).rejects.toMatchObject({ code: 'kv.corrupt' });
  });

  it('fails fast with kv.unavailable naming host:port, never the password, when the server is down', async () => {
    const port = await closedPort();
    const s = track(openRedisKvStore({ url: `redis://:s3cret-pw@127.0.0.1:${port}/0` }));
    const calls: [string, () => Promise<unknown>][] = [
      ['get', () => s.get('ns', 'k')],
      ['set', () => s.set('ns', 'k', 1)],
      ['setIfAbsent', () => s.setIfAbsent('ns', 'k', 1)],
      ['delete', () => s.delete('ns', 'k')],
    ];
    for (const [name, call] of calls) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e as Error & { code: string },
      );
      expect(err, name).toBeDefined();
      expect(err!.code).toBe('kv.unavailable');
      expect(err!.message).toContain(`127.0.0.1:${port}`);
      expect(err!.message).toMatch(/ECONNREFUSED/);
      expect(JSON.stringify({ m: err!.message, d: (err as any).details })).not.toContain('s3cret');
    }
  });

  it('recovers by itself once the server is up again', async () => {
    const port = await closedPort();
    const s = track(openRedisKvStore({ url: `redis://127.0.0.1:${port}`, keyPrefix: `${run}recover:` }));
    await expect(s.get('ns', 'k')).rejects.toMatchObject({ code: 'kv.unavailable' });
    const server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    try {
      let value: unknown;
      for (let i = 0; i < 100; i++) {
        try {
          await s.set('ns', 'k', 'back');
          value = await s.get('ns', 'k');
          break;
        } catch (err) {
          expect((err as { code?: string }).code).toBe('kv.unavailable');
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(value).toBe('back');
    } finally {
      await s.close();
      const gone = new Promise((r) => server.on('exit', r));
      server.kill('SIGTERM');
      await gone;
    }
  });

  it('refuses a kv.url that is not redis:// or rediss://', () => {
    expect(() => openRedisKvStore({ url: 'http://127.0.0.1:6379' })).toThrow(
      expect.objectContaining({ code: 'kv.unavailable' }),
    );
  });
});
