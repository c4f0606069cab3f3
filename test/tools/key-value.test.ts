/**
 * key_value_get / key_value_set / key_value_delete through their run(), against both backends:
 * the embedded store in a temp data_dir and the real redis-server on 127.0.0.1:6379.
 */
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sharedKvStore } from '../../src/kv/index.ts';
import type { ToolConfig } from '../../src/tools/types.ts';
import keyValueDelete from '../../tools/key-value-delete.ts';
import keyValueGet from '../../tools/key-value-get.ts';
import keyValueSet from '../../tools/key-value-set.ts';
import {
  configIn,
  removeTempDirs,
  type TestServices,
  tempDir,
  testServices,
  toolContext,
} from '../kv/fixtures.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
// Listener names are unique per run, so Redis keys (organism:kv:<listener>:...) never collide.
const run = randomUUID().slice(0, 8);
const alice = `alice-${run}`;
const bob = `bob-${run}`;
const carol = `carol-${run}`;

const opened: TestServices[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.closeAll()));
});
afterAll(async () => {
  const raw = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  for (const pattern of [`organism:kv:*-${run}:*`, `organism:kv:shared-${run}:*`]) {
    const keys = await raw.keys(pattern);
    if (keys.length > 0) await raw.del(...keys);
  }
  await raw.quit();
  await removeTempDirs();
});

async function services(backend: 'embedded' | 'redis', dataDir?: string): Promise<TestServices> {
  const dir = dataDir ?? (await tempDir());
  const s = testServices(configIn(dir, backend === 'redis' ? { kv: { url: REDIS_URL } } : {}));
  opened.push(s);
  return s;
}

describe.each(['embedded', 'redis'] as const)('key_value_* tools on the %s store', (backend) => {
  const as = (svc: TestServices, listener: string, config: ToolConfig = {}) =>
    toolContext(svc, { listener, config });

  it('set, get and delete a value in the caller’s own namespace', async () => {
    const svc = await services(backend);
    const value = { list: [1, 'two', null], nested: { ok: true } };
    expect(await keyValueSet.run({ key: 'notes', value }, as(svc, alice))).toEqual({ ok: true });
    expect(await keyValueGet.run({ key: 'notes' }, as(svc, alice))).toEqual({ found: true, value });
    // It landed in the namespace named after the listener.
    const store = await sharedKvStore(svc);
    expect(await store.get(alice, 'notes')).toEqual(value);
    expect(await keyValueDelete.run({ key: 'notes' }, as(svc, alice))).toEqual({ deleted: true });
    expect(await keyValueDelete.run({ key: 'notes' }, as(svc, alice))).toEqual({ deleted: false });
    expect(await keyValueGet.run({ key: 'notes' }, as(svc, alice))).toEqual({ found: false, value: null });
  });

  it('tells a stored null from a missing key', async () => {
    const svc = await services(backend);
    await keyValueSet.run({ key: 'nothing', value: null }, as(svc, alice));
    expect(await keyValueGet.run({ key: 'nothing' }, as(svc, alice))).toEqual({ found: true, value: null });
    expect(await keyValueGet.run({ key: 'never' }, as(svc, alice))).toEqual({ found: false, value: null });
  });

  it('keeps listeners apart: the same key in two listeners’ namespaces is two values', async () => {
    const svc = await services(backend);
    await keyValueSet.run({ key: 'k', value: 'alice’s' }, as(svc, alice));
    await keyValueSet.run({ key: 'k', value: 'bob’s' }, as(svc, bob));
    expect(await keyValueGet.run({ key: 'k' }, as(svc, alice))).toEqual({ found: true, value: 'alice’s' });
    expect(await keyValueGet.run({ key: 'k' }, as(svc, bob))).toEqual({ found: true, value: 'bob’s' });
  });

  it('refuses another listener’s namespace unless tool_config allows it', async () => {
    const svc = await services(backend);
    await keyValueSet.run({ key: 'secret', value: 's' }, as(svc, alice));
    for (const [tool, args] of [
      [keyValueGet, { key: 'secret', namespace: alice }],
      [keyValueSet, { key: 'secret', value: 'overwritten', namespace: alice }],
      [keyValueDelete, { key: 'secret', namespace: alice }],
    ] as const) {
      await expect(tool.run(args as never, as(svc, bob)), tool.name).rejects.toMatchObject({
        code: 'kv.namespace_denied',
        message: expect.stringContaining(`tool_config.${tool.name}.allowed_namespaces`),
      });
      await expect(
        tool.run(args as never, as(svc, bob, { allowed_namespaces: [carol] })),
        `${tool.name} with another namespace allowed`,
      ).rejects.toMatchObject({ code: 'kv.namespace_denied' });
    }
    expect(await keyValueGet.run({ key: 'secret' }, as(svc, alice))).toEqual({ found: true, value: 's' });
  });

  it('refuses the runtime\'s own names (approvals, effects) as namespaces, even with "*" or listed', async () => {
    const svc = await services(backend);
    for (const namespace of ['approvals', 'effects']) {
      for (const config of [{ allowed_namespaces: ['*'] }, { allowed_namespaces: [namespace] }]) {
        for (const [tool, args] of [
          [keyValueSet, { key: 'd.ap_1', value: { state: 'approved' }, namespace }],
          [keyValueGet, { key: 'd.ap_1', namespace }],
          [keyValueDelete, { key: 'd.ap_1', namespace }],
        ] as const) {
          await expect(
            tool.run(args as never, as(svc, alice, config)),
            `${tool.name} ${namespace}`,
          ).rejects.toMatchObject({
            code: 'kv.namespace_denied',
            message: expect.stringContaining("runtime's own state"),
          });
        }
      }
    }
  });

  it('allows a namespace listed in allowed_namespaces, or any with "*"', async () => {
    const svc = await services(backend);
    const shared = `shared-${run}`;
    await keyValueSet.run(
      { key: 'k', value: 1, namespace: shared },
      as(svc, alice, { allowed_namespaces: [shared] }),
    );
    expect(
      await keyValueGet.run({ key: 'k', namespace: shared }, as(svc, bob, { allowed_namespaces: ['*'] })),
    ).toEqual({
      found: true,
      value: 1,
    });
    expect(
      await keyValueDelete.run(
        { key: 'k', namespace: shared },
        as(svc, carol, { allowed_namespaces: [shared] }),
      ),
    ).toEqual({ deleted: true });
    // Naming one's own namespace needs no permission.
    await keyValueSet.run({ key: 'own', value: 2, namespace: alice }, as(svc, alice));
    expect(await keyValueGet.run({ key: 'own' }, as(svc, alice))).toEqual({ found: true, value: 2 });
  });

  it('refuses a value over max_value_bytes (default 1 MiB) and stores nothing', async () => {
    const svc = await services(backend);
    await expect(
      keyValueSet.run({ key: 'big', value: 'x'.repeat(1024 * 1024) }, as(svc, alice)),
    ).rejects.toMatchObject({ code: 'kv.value_too_large', message: expect.stringContaining('1048576') });
    await expect(
      keyValueSet.run({ key: 'big', value: 'x'.repeat(9) }, as(svc, alice, { max_value_bytes: 10 })),
    ).rejects.toMatchObject({ code: 'kv.value_too_large' });
    expect(await keyValueGet.run({ key: 'big' }, as(svc, alice))).toEqual({ found: false, value: null });
    await keyValueSet.run({ key: 'big', value: 'x'.repeat(8) }, as(svc, alice, { max_value_bytes: 10 }));
    expect(await keyValueGet.run({ key: 'big' }, as(svc, alice))).toEqual({ found: true, value: 'xxxxxxxx' });
  });

  it('expires a value after its ttl', async () => {
    const svc = await services(backend);
    await keyValueSet.run({ key: 'brief', value: 'now', ttl: 1 }, as(svc, alice));
    expect(await keyValueGet.run({ key: 'brief' }, as(svc, alice))).toEqual({ found: true, value: 'now' });
    await new Promise((r) => setTimeout(r, 1300));
    expect(await keyValueGet.run({ key: 'brief' }, as(svc, alice))).toEqual({ found: false, value: null });
  });

  it('passes the store’s own refusals through (bad key)', async () => {
    const svc = await services(backend);
    await expect(keyValueSet.run({ key: 'a\nb', value: 1 }, as(svc, alice))).rejects.toMatchObject({
      code: 'kv.invalid_key',
    });
  });

  it('keeps values across a restart of the organism (services closed and rebuilt)', async () => {
    const dataDir = await tempDir();
    const first = await services(backend, dataDir);
    await keyValueSet.run({ key: 'durable', value: { n: 7 } }, as(first, alice));
    await first.closeAll();
    const second = await services(backend, dataDir);
    expect(await keyValueGet.run({ key: 'durable' }, as(second, alice))).toEqual({
      found: true,
      value: { n: 7 },
    });
  });
});

describe('key_value_* declarations', () => {
  const ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true, useDefaults: true });
  const valid = (tool: { args: object }, args: unknown) => ajv.validate(tool.args, args);

  it('declare capability, readOnly and sideEffect as the runtime expects', () => {
    expect(keyValueGet).toMatchObject({
      name: 'key_value_get',
      capability: 'db_read',
      readOnly: true,
      source: 'native',
    });
    expect(keyValueGet.sideEffect).toBeFalsy();
    expect(keyValueSet).toMatchObject({
      name: 'key_value_set',
      capability: 'db_write',
      readOnly: false,
      sideEffect: true,
    });
    expect(keyValueDelete).toMatchObject({
      name: 'key_value_delete',
      capability: 'db_write',
      sideEffect: true,
    });
    for (const t of [keyValueGet, keyValueSet, keyValueDelete]) {
      expect(t.guard).toBeUndefined();
      expect(ajv.validateSchema(t.config!)).toBe(true);
      expect(ajv.validate(t.config!, { allowed_namespaces: ['*'] })).toBe(true);
      expect(ajv.validate(t.config!, { allowed_namespaces: 'all' })).toBe(false);
    }
  });

  it('accept good arguments and refuse bad ones by their args schema', () => {
    expect(valid(keyValueSet, { key: 'k', value: null })).toBe(true);
    expect(valid(keyValueSet, { key: 'k', value: { any: ['json'] }, namespace: 'n', ttl: 60 })).toBe(true);
    expect(valid(keyValueSet, { key: 'k' })).toBe(false); // value is required
    expect(valid(keyValueSet, { key: '', value: 1 })).toBe(false);
    expect(valid(keyValueSet, { key: 'x'.repeat(513), value: 1 })).toBe(false);
    expect(valid(keyValueSet, { key: 'k', value: 1, ttl: 0 })).toBe(false);
    expect(valid(keyValueSet, { key: 'k', value: 1, ttl: 1.5 })).toBe(false);
    expect(valid(keyValueSet, { key: 'k', value: 1, extra: true })).toBe(false);
    expect(valid(keyValueGet, { key: 'k' })).toBe(true);
    expect(valid(keyValueGet, {})).toBe(false);
    expect(valid(keyValueGet, { key: 'k', namespace: '' })).toBe(false);
    expect(valid(keyValueDelete, { key: 'k', namespace: 'n' })).toBe(true);
    expect(valid(keyValueDelete, { key: 5 })).toBe(false);
  });
});
