/**
 * Once-only effects on the embedded kv store (single-daemon mode): a call id already finished is
 * answered with its first result; one started by an earlier process that died mid-way is in doubt
 * at once (no other process can still be running it), where a shared store waits for the first run.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedKvStore } from '../../src/kv/index.ts';
import type { KvStore } from '../../src/kv/types.ts';
import { kvEffectLog } from '../../src/tools/once.ts';

const stores: KvStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function store(): Promise<KvStore> {
  const opened = await openEmbeddedKvStore({ dir: await mkdtemp(join(tmpdir(), 'organism-once-')) });
  stores.push(opened);
  return opened;
}

describe('effect log on the embedded store', () => {
  it('lets the first call act and answers a repeat with its result', async () => {
    const log = kvEffectLog(await store(), { oneProcess: true });
    expect(await log.begin('m1.call-1', 'webhook', 5_000)).toBeUndefined();
    const result = { status: 'ok' as const, tool: 'webhook', value: { status_code: 200 } };
    await log.finish('m1.call-1', result);
    expect(await log.begin('m1.call-1', 'webhook', 5_000)).toEqual(result);
  });

  it('answers EffectInDoubt at once for a call an earlier process started and never finished', async () => {
    const kv = await store();
    // What a daemon killed during the call leaves behind.
    await kv.set('effects', 'm2.call-1', {
      state: 'pending',
      at: Date.now() - 1_000,
      owner: 'a-dead-process',
    });
    const started = Date.now();
    const answer = await kvEffectLog(kv, { oneProcess: true }).begin('m2.call-1', 'send_email', 60_000);
    expect(answer).toMatchObject({ status: 'error', error: { code: 'EffectInDoubt' } });
    expect(Date.now() - started).toBeLessThan(1_000);
    // A shared store waits for the first run instead (it may be another daemon, still working).
    const shared = await kvEffectLog(kv).begin('m2.call-1', 'send_email', 300);
    expect(shared).toMatchObject({ error: { code: 'EffectInDoubt' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});
