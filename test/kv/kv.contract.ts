/**
 * The one case file every KvStore backend runs (embedded.test.ts, redis.test.ts). A backend passes
 * when it behaves the same as the others here: same values back, same refusals, same codes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KvLimits, KvStore } from '../../src/kv/index.ts';

export interface KvHarness {
  /** A store over fresh, empty data. */
  fresh(limits?: Partial<KvLimits>): Promise<KvStore>;
  /** A new store over the same data as `store`, which the caller has closed. */
  reopen(store: KvStore): Promise<KvStore>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function kvContract(backend: string, harness: KvHarness): void {
  describe(`KvStore contract: ${backend}`, () => {
    const open: KvStore[] = [];
    const fresh = async (limits?: Partial<KvLimits>) => {
      const s = await harness.fresh(limits);
      open.push(s);
      return s;
    };
    const reopen = async (s: KvStore) => {
      await s.close();
      const r = await harness.reopen(s);
      open.push(r);
      return r;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.close()));
    });

    it('says which backend it is', async () => {
      expect((await fresh()).kind).toBe(backend);
    });

    it('returns undefined for a key never set', async () => {
      const s = await fresh();
      expect(await s.get('ns', 'missing')).toBeUndefined();
    });

    it('round-trips every kind of JSON value, and tells a stored null from an absent key', async () => {
      const s = await fresh();
      const values: [string, unknown][] = [
        ['string', 'hello'],
        ['empty', ''],
        ['zero', 0],
        ['negative', -1.5],
        ['big', 1e300],
        ['true', true],
        ['false', false],
        ['null', null],
        ['array', [1, 'two', [3], { four: 4 }]],
        ['empty-array', []],
        ['empty-object', {}],
        ['nested', { a: { b: { c: [null, true, 'ü ✓ 日本 "quoted" \\ back\nnewline'] } } }],
      ];
      for (const [k, v] of values) await s.set('ns', k, v);
      for (const [k, v] of values) expect(await s.get('ns', k), k).toEqual(v);
      expect(await s.get('ns', 'null')).toBeNull();
    });

    it('replaces the value of an existing key', async () => {
      const s = await fresh();
      await s.set('ns', 'k', { v: 1 });
      await s.set('ns', 'k', 'second');
      expect(await s.get('ns', 'k')).toBe('second');
    });

    it('hands back a copy: changing a returned object does not change the stored value', async () => {
      const s = await fresh();
      const original = { list: [1, 2] };
      await s.set('ns', 'k', original);
      original.list.push(99);
      const got = (await s.get('ns', 'k')) as { list: number[] };
      got.list.push(3);
      expect(await s.get('ns', 'k')).toEqual({ list: [1, 2] });
    });

    it('keeps namespaces apart', async () => {
      const s = await fresh();
      await s.set('alice', 'k', 'a');
      await s.set('bob', 'k', 'b');
      expect(await s.get('alice', 'k')).toBe('a');
      expect(await s.get('bob', 'k')).toBe('b');
      expect(await s.delete('alice', 'k')).toBe(true);
      expect(await s.get('bob', 'k')).toBe('b');
    });

    it('accepts keys with colons, spaces, unicode and the maximum length, each distinct', async () => {
      const s = await fresh();
      const keys = ['a', 'a:b', 'a:b:c', 'with space', 'ü✓日本', 'x'.repeat(512), '"quoted"', '*', '{}'];
      for (const [i, k] of keys.entries()) await s.set('ns', k, i);
      for (const [i, k] of keys.entries()) expect(await s.get('ns', k), k).toBe(i);
    });

    it('deletes: true when the key existed, false otherwise', async () => {
      const s = await fresh();
      expect(await s.delete('ns', 'never')).toBe(false);
      await s.set('ns', 'k', 1);
      expect(await s.delete('ns', 'k')).toBe(true);
      expect(await s.get('ns', 'k')).toBeUndefined();
      expect(await s.delete('ns', 'k')).toBe(false);
    });

    it('setIfAbsent stores only when the key is absent', async () => {
      const s = await fresh();
      expect(await s.setIfAbsent('ns', 'once', 'first')).toBe(true);
      expect(await s.setIfAbsent('ns', 'once', 'second')).toBe(false);
      expect(await s.get('ns', 'once')).toBe('first');
      await s.delete('ns', 'once');
      expect(await s.setIfAbsent('ns', 'once', 'third')).toBe(true);
      expect(await s.get('ns', 'once')).toBe('third');
    });

    it('setIfAbsent is atomic: of many concurrent calls exactly one wins', async () => {
      const s = await fresh();
      const results = await Promise.all(Array.from({ length: 25 }, (_, i) => s.setIfAbsent('ns', 'race', i)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await s.get('ns', 'race')).toBe(results.indexOf(true));
    });

    it('keeps every one of many concurrent sets', async () => {
      const s = await fresh();
      await Promise.all(Array.from({ length: 60 }, (_, i) => s.set('ns', `k${i}`, { i })));
      const r = await reopen(s);
      for (let i = 0; i < 60; i++) expect(await r.get('ns', `k${i}`)).toEqual({ i });
    });

    it('keeps data across close and reopen, deletions included', async () => {
      const s = await fresh();
      await s.set('ns', 'kept', { deep: [1, 2, 3] });
      await s.set('ns', 'gone', 'x');
      await s.delete('ns', 'gone');
      await s.set('other', 'kept', 'o', 3600);
      const r = await reopen(s);
      expect(await r.get('ns', 'kept')).toEqual({ deep: [1, 2, 3] });
      expect(await r.get('ns', 'gone')).toBeUndefined();
      expect(await r.get('other', 'kept')).toBe('o');
    });

    it('honours ttl: readable until it runs out, then gone (get, delete, setIfAbsent all agree)', async () => {
      const s = await fresh();
      await s.set('ns', 'short', 'v', 1);
      await s.set('ns', 'was-short', 'v', 1);
      await s.set('ns', 'was-short', 'now permanent'); // a set without ttl clears the old ttl
      await s.set('ns', 'long', 'v', 3600);
      await s.setIfAbsent('ns', 'once', 'first', 1);
      expect(await s.get('ns', 'short')).toBe('v');
      await sleep(1300);
      expect(await s.get('ns', 'short')).toBeUndefined();
      expect(await s.delete('ns', 'short')).toBe(false);
      expect(await s.get('ns', 'was-short')).toBe('now permanent');
      expect(await s.get('ns', 'long')).toBe('v');
      expect(await s.setIfAbsent('ns', 'once', 'second')).toBe(true);
      expect(await s.get('ns', 'once')).toBe('second');
    });

    it('refuses bad keys with kv.invalid_key and stores nothing', async () => {
      const s = await fresh();
      const bad: unknown[] = [
        '',
        'x'.repeat(513),
        'line\nbreak',
        'cr\r',
        'nul\u0000',
        'del\u007f',
        'c1\u0085',
        42,
        null,
      ];
      for (const k of bad) {
        await expect(s.set('ns', k as string, 1), JSON.stringify(k)).rejects.toMatchObject({
          code: 'kv.invalid_key',
        });
        await expect(s.get('ns', k as string)).rejects.toMatchObject({ code: 'kv.invalid_key' });
        await expect(s.delete('ns', k as string)).rejects.toMatchObject({ code: 'kv.invalid_key' });
        await expect(s.setIfAbsent('ns', k as string, 1)).rejects.toMatchObject({ code: 'kv.invalid_key' });
      }
      expect(await s.get('ns', 'line')).toBeUndefined();
    });

    it('refuses bad namespaces with kv.invalid_namespace', async () => {
      const s = await fresh();
      for (const ns of ['', 'a:b', 'tab\t', 'n'.repeat(129), undefined]) {
        await expect(s.set(ns as string, 'k', 1), String(ns)).rejects.toMatchObject({
          code: 'kv.invalid_namespace',
        });
        await expect(s.get(ns as string, 'k')).rejects.toMatchObject({ code: 'kv.invalid_namespace' });
      }
      // The Redis key layout is <ns>:<key>; refusing ':' in ns keeps ("a:b","c") from meeting ("a","b:c").
      await s.set('a', 'b:c', 'from a');
      expect(await s.get('a', 'b:c')).toBe('from a');
    });

    it('refuses values that are not JSON with kv.invalid_value and stores nothing', async () => {
      const s = await fresh();
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const bad: unknown[] = [
        undefined,
        () => 1,
        Symbol('s'),
        10n,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        cyclic,
        { nested: { fn: () => 1 } },
        [1, undefined],
        { gone: undefined },
        { n: Number.NaN },
      ];
      for (const [i, v] of bad.entries()) {
        await expect(s.set('ns', `bad${i}`, v), `value #${i}`).rejects.toMatchObject({
          code: 'kv.invalid_value',
        });
        await expect(s.setIfAbsent('ns', `bad${i}`, v)).rejects.toMatchObject({ code: 'kv.invalid_value' });
        expect(await s.get('ns', `bad${i}`)).toBeUndefined();
      }
    });

    it('refuses a bad ttl with kv.invalid_ttl and stores nothing', async () => {
      const s = await fresh();
      for (const ttl of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '10', 400_000_000]) {
        await expect(s.set('ns', 'k', 1, ttl as number), String(ttl)).rejects.toMatchObject({
          code: 'kv.invalid_ttl',
        });
      }
      expect(await s.get('ns', 'k')).toBeUndefined();
    });

    it('refuses a value over maxValueBytes with kv.value_too_large, counting UTF-8 bytes of the JSON', async () => {
      const s = await fresh({ maxValueBytes: 20 });
      await s.set('ns', 'fits', 'x'.repeat(18)); // "xxx..." = 18 + 2 quotes = 20 bytes
      expect(await s.get('ns', 'fits')).toBe('x'.repeat(18));
      await expect(s.set('ns', 'big', 'x'.repeat(19))).rejects.toMatchObject({ code: 'kv.value_too_large' });
      // 7 characters but 3 bytes each in UTF-8: 21 + 2 bytes.
      await expect(s.set('ns', 'wide', '日本語日本語日')).rejects.toMatchObject({
        code: 'kv.value_too_large',
      });
      expect(await s.get('ns', 'big')).toBeUndefined();
    });

    it('refuses every call after close with kv.closed; close twice is fine', async () => {
      const s = await fresh();
      await s.set('ns', 'k', 1);
      await s.close();
      await s.close();
      await expect(s.get('ns', 'k')).rejects.toMatchObject({ code: 'kv.closed' });
      await expect(s.set('ns', 'k', 2)).rejects.toMatchObject({ code: 'kv.closed' });
      await expect(s.setIfAbsent('ns', 'k2', 2)).rejects.toMatchObject({ code: 'kv.closed' });
      await expect(s.delete('ns', 'k')).rejects.toMatchObject({ code: 'kv.closed' });
    });
  });
}
