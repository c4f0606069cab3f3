/**
 * Once-only effects on the embedded state store (single-daemon mode): a call id already finished is
 * answered with its first result; one started by an earlier process that died mid-way is in doubt
 * at once (no other process can still be running it), where a shared store waits for the first run.
 * Records are out of reach and sealed (issue 25): named by an HMAC of the call id, never by the
 * call id; a record that fails its seal is not the call's result, does not stop it from acting, and
 * is reported once.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { auditKeyId } from '../../src/audit/key.ts';
import { openEmbeddedKvStore } from '../../src/kv/index.ts';
import type { KvStore } from '../../src/kv/types.ts';
import { RuntimeState, STATE_RESOURCE_KEY, StateSeal, type StateThreat } from '../../src/state/index.ts';
import { testConfig } from '../../src/testing/index.ts';
import { EFFECTS_SPACE, effectNames, stateEffectLog } from '../../src/tools/once.ts';
import { createToolServices } from '../../src/tools/services.ts';
import { TEST_STATE_KEYS, testState } from '../helpers/state.ts';
import { makeDispatcher, noopTool } from './runtime/helpers.ts';

const stores: KvStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function store(): Promise<KvStore> {
  const opened = await openEmbeddedKvStore({ dir: await mkdtemp(join(tmpdir(), 'organism-once-')) });
  stores.push(opened);
  return opened;
}

const ok = (value: unknown) => ({ status: 'ok' as const, tool: 'webhook', value });

describe('effect log on the embedded store', () => {
  it('lets the first call act and answers a repeat with its result', async () => {
    const log = stateEffectLog(testState(await store()), { oneProcess: true });
    expect(await log.begin('m1.call-1', 'webhook', 5_000)).toBeUndefined();
    const result = ok({ status_code: 200 });
    await log.finish('m1.call-1', result);
    expect(await log.begin('m1.call-1', 'webhook', 5_000)).toEqual(result);
  });

  it('answers EffectInDoubt at once for a call an earlier process started and never finished', async () => {
    const state = testState(await store());
    // What a daemon killed during the call leaves behind.
    await state.set(EFFECTS_SPACE, effectNames(state, 'm2.call-1')[0]!, {
      state: 'pending',
      at: Date.now() - 1_000,
      owner: 'a-dead-process',
    });
    const started = Date.now();
    const answer = await stateEffectLog(state, { oneProcess: true }).begin('m2.call-1', 'send_email', 60_000);
    expect(answer).toMatchObject({ status: 'error', error: { code: 'EffectInDoubt' } });
    expect(Date.now() - started).toBeLessThan(1_000);
    // A shared store waits for the first run instead (it may be another daemon, still working),
    // until 1.5 s after that run started.
    const shared = await stateEffectLog(state).begin('m2.call-1', 'send_email', 1_500);
    expect(shared).toMatchObject({ error: { code: 'EffectInDoubt' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('on a shared store waits for the first run only until it would have had its answer, counted from its start', async () => {
    const state = testState(await store());
    // A daemon started the call 4 s ago and was killed (the repeat comes after the failover).
    await state.set(EFFECTS_SPACE, effectNames(state, 'm6.call-1')[0]!, {
      state: 'pending',
      at: Date.now() - 4_000,
      owner: 'a-killed-daemon',
    });
    let started = Date.now();
    const answer = await stateEffectLog(state).begin('m6.call-1', 'send_email', 5_000);
    expect(answer).toMatchObject({ status: 'error', error: { code: 'EffectInDoubt' } });
    // About 1 s (5 s from the first run's start), not the whole 5 s again.
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
    expect(Date.now() - started).toBeLessThan(3_500);
    // A first run stamped later than now (the other daemon's clock is ahead) is waited for no
    // longer than the repeat's own wait.
    await state.set(EFFECTS_SPACE, effectNames(state, 'm7.call-1')[0]!, {
      state: 'pending',
      at: Date.now() + 60_000,
      owner: 'a-daemon-ahead',
    });
    started = Date.now();
    expect(await stateEffectLog(state).begin('m7.call-1', 'send_email', 300)).toMatchObject({
      error: { code: 'EffectInDoubt' },
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe('effect records an attacker writes', () => {
  it('are not under the call id: a record written there is never read', async () => {
    const kv = await store();
    const state = testState(kv);
    const [name] = effectNames(state, 'm3.call-1');
    expect(name).toMatch(/^[0-9a-f]{32}$/);
    expect(name).not.toContain('m3');
    // Another key gives other names: nobody without the key can work them out.
    const secret = Buffer.from('another-key-0123456789abcdef0123456789abcdef');
    const other = new RuntimeState({
      open: async () => kv,
      seal: new StateSeal(() => [{ id: auditKeyId(secret), secret }]),
    });
    expect(effectNames(other, 'm3.call-1')[0]).not.toBe(name);
    await kv.set(EFFECTS_SPACE, 'm3.call-1', { state: 'done', result: ok('FAKE') });
    expect(
      await stateEffectLog(state, { oneProcess: true }).begin('m3.call-1', 'webhook', 1_000),
    ).toBeUndefined();
  });

  it('under the right name but unsealed, sealed elsewhere or with a made-up seal: the call acts, and each is reported once', async () => {
    const kv = await store();
    const threats: StateThreat[] = [];
    const state = testState(kv, threats);
    const log = stateEffectLog(state, { oneProcess: true });
    const fake = { state: 'done', result: ok('FAKE') };
    // A genuine record of another call, copied over this call's name.
    await state.set(EFFECTS_SPACE, effectNames(state, 'other.call-1')[0]!, fake);
    const copied = await kv.get(EFFECTS_SPACE, effectNames(state, 'other.call-1')[0]!);
    const forgeries: Array<[string, unknown]> = [
      ['plain', fake],
      ['copied', copied],
      ['made-up', { s: 1, kid: TEST_STATE_KEYS[0]!.id, mac: '0'.repeat(64), body: JSON.stringify(fake) }],
      ['unknown key', { s: 1, kid: 'ffffffff', mac: '0'.repeat(64), body: JSON.stringify(fake) }],
    ];
    for (const [what, forged] of forgeries) {
      const callId = `m4.${what}`;
      const name = effectNames(state, callId)[0]!;
      await kv.set(EFFECTS_SPACE, name, forged);
      expect(await log.begin(callId, 'webhook', 1_000), what).toBeUndefined();
      await log.finish(callId, ok('real'));
      // The call's own result replaced the forgery: a repeat gets it.
      expect(await log.begin(callId, 'webhook', 1_000), what).toEqual(ok('real'));
    }
    expect(threats.map((t) => t.record)).toEqual(
      forgeries.map(([what]) => `effects/${effectNames(state, `m4.${what}`)[0]}`),
    );
    expect(threats.every((t) => t.tool === 'webhook' && /failed verification/.test(t.reason))).toBe(true);
    expect(threats[3]!.reason).toMatch(/does not have/);
  });

  it('a record made before a key rotation is still found under its old name', async () => {
    const kv = await store();
    const secret = Buffer.from('rotated-in-key-0123456789abcdef0123456789abcdef');
    const ring = [...TEST_STATE_KEYS];
    const state = new RuntimeState({ open: async () => kv, seal: new StateSeal(() => ring) });
    const log = stateEffectLog(state, { oneProcess: true });
    expect(await log.begin('m5.call-1', 'webhook', 1_000)).toBeUndefined();
    await log.finish('m5.call-1', ok('first'));
    ring.push({ id: auditKeyId(secret), secret });
    expect(await log.begin('m5.call-1', 'webhook', 1_000)).toEqual(ok('first'));
  });
});

describe('calls that need no once-only record', () => {
  it('never open the state store; a side-effecting call does', async () => {
    const kv = await store();
    let opened = 0;
    const state = new RuntimeState({
      open: async () => {
        opened++;
        return kv;
      },
      seal: new StateSeal(() => TEST_STATE_KEYS),
    });
    const { services, resources } = createToolServices(testConfig());
    await resources.get(STATE_RESOURCE_KEY, () => state);
    const reader = noopTool();
    const writer = { ...noopTool('send_thing'), readOnly: false, sideEffect: true };
    const d = makeDispatcher([reader, writer], [{ name: 'alice', tools: ['noop', 'send_thing'] }], {
      services,
    });
    for (let i = 0; i < 3; i++) {
      const r = await d.call({
        tool: 'noop',
        args: {},
        listener: 'alice',
        thread: `t${i}`,
        callId: `m${i}.call-1`,
      });
      expect(r.status).toBe('ok');
    }
    expect(opened).toBe(0);
    const w = await d.call({
      tool: 'send_thing',
      args: {},
      listener: 'alice',
      thread: 't',
      callId: 'm9.call-1',
    });
    expect(w.status).toBe('ok');
    expect(opened).toBe(1);
  });
});
