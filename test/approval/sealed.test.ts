/**
 * Issue 25: approval records are sealed. Someone who can write the runtime state store itself (a
 * program reaching Redis, a hand in the state folder) still cannot decide a call or change what the
 * approver is shown: a decision or request without the runtime's seal, a genuine decision of
 * another approval copied over, is refused, and the refusal is reported once as a threat, not once
 * per look of the waiting call.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedKvStore } from '../../src/kv/index.ts';
import type { KvStore } from '../../src/kv/types.ts';
import type { StateThreat } from '../../src/state/index.ts';
import { until } from '../../src/testing/index.ts';
import { ApprovalGate, approvalId } from '../../src/tools/approval/index.ts';
import type { Approval, ApprovalAsk } from '../../src/tools/approval/types.ts';
import { testState } from '../helpers/state.ts';

const stores: KvStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function setup() {
  const kv = await openEmbeddedKvStore({ dir: await mkdtemp(join(tmpdir(), 'approval-sealed-')) });
  stores.push(kv);
  const threats: StateThreat[] = [];
  const state = testState(kv, threats);
  const decided: Approval[] = [];
  const gate = new ApprovalGate({ state, pollMs: 20 });
  gate.observe({ decided: (a) => decided.push(a) });
  return { kv, state, threats, gate, decided };
}

function ask(overrides: Partial<ApprovalAsk> = {}): ApprovalAsk {
  return {
    thread: 't-1',
    listener: 'ops',
    tool: 'run_command',
    callId: 'm-1.call-1',
    args: { command: 'rm -rf /srv/data' },
    verdict: 'allow',
    ruleId: null,
    why: 'always',
    settings: { mode: 'always', timeoutMs: 600_000, role: 'operator', maxPending: 20, elicit: true },
    ...overrides,
  };
}

const approved = { state: 'approved', by: 'alice', at: new Date().toISOString(), reason: 'lgtm' };
const anyRole = () => true;

describe('a forged decision', () => {
  it('written while the call waits: the call is refused, not run, and reported once', async () => {
    const { kv, threats, gate, decided } = await setup();
    const waiting = gate.ask(ask());
    const id = approvalId(ask());
    await until(async () => (await gate.list()).length === 1);
    await kv.set('approvals', `d.${id}`, approved);
    const outcome = await waiting;
    expect(outcome).toMatchObject({ state: 'denied', decided_by: 'organism' });
    expect(outcome.reason).toMatch(/decision record failed verification/);
    // The waiter looked every 20 ms: one report all the same.
    await new Promise((r) => setTimeout(r, 200));
    await gate.get(id);
    expect(threats).toHaveLength(1);
    expect(threats[0]).toMatchObject({ record: `approvals/d.${id}`, tool: 'run_command' });
    // Nobody can approve it any more, and it is off the list.
    await expect(gate.decide(id, 'approved', 'bob', null, anyRole)).rejects.toMatchObject({
      code: 'approval.decided',
    });
    expect(await gate.list()).toEqual([]);
    expect(decided.map((a) => [a.state, a.decided_by])).toEqual([['denied', 'organism']]);
  });

  it("a genuine decision of another approval, copied over this one's: refused", async () => {
    const { kv, gate } = await setup();
    const other = gate.ask(ask({ callId: 'm-2.call-1', args: { command: 'ls' } }));
    const otherId = approvalId(ask({ callId: 'm-2.call-1', args: { command: 'ls' } }));
    await until(async () => (await gate.list()).length === 1);
    await gate.decide(otherId, 'approved', 'alice', null, anyRole);
    expect((await other).state).toBe('approved');

    const waiting = gate.ask(ask());
    const id = approvalId(ask());
    await until(async () => (await gate.list()).some((a) => a.id === id));
    await kv.set('approvals', `d.${id}`, await kv.get('approvals', `d.${otherId}`));
    expect(await waiting).toMatchObject({ state: 'denied', decided_by: 'organism' });
  });

  it('written before the call asks (its id is knowable): the call is refused at once, on the record', async () => {
    const { kv, threats, gate, decided } = await setup();
    await kv.set('approvals', `d.${approvalId(ask())}`, approved);
    const outcome = await gate.ask(ask());
    expect(outcome).toMatchObject({ state: 'denied', decided_by: 'organism' });
    expect(threats).toHaveLength(1);
    expect(decided.map((a) => a.state)).toEqual(['denied']);
  });
});

describe('a forged request', () => {
  it('pre-written with other arguments: the approver is never shown it, and the call is refused', async () => {
    const { kv, threats, gate } = await setup();
    const id = approvalId(ask());
    const now = Date.now();
    await kv.set('approvals', `r.${id}`, {
      id,
      thread: 't-1',
      listener: 'ops',
      tool: 'run_command',
      call_id: 'm-1.call-1',
      args: { command: 'ls' },
      verdict: 'allow',
      rule_id: null,
      why: 'always',
      role: 'operator',
      requested: new Date(now).toISOString(),
      expires: new Date(now + 600_000).toISOString(),
    });
    await kv.set('approvals', 'index', [id]);
    const outcome = await gate.ask(ask());
    expect(outcome).toMatchObject({ state: 'denied', decided_by: 'organism' });
    expect(outcome.args).toEqual({ command: 'rm -rf /srv/data' });
    expect(outcome.reason).toMatch(/request record failed verification/);
    expect(await gate.list()).toEqual([]);
    expect(await gate.get(id)).toBeUndefined();
    expect(threats.map((t) => t.record)).toEqual([`approvals/r.${id}`]);
  });

  it('index entries that are no approval id are not looked at', async () => {
    const { kv, gate } = await setup();
    await kv.set('approvals', 'index', ['../../x', '__proto__', 'ap_zz', 42]);
    expect(await gate.list()).toEqual([]);
  });
});

describe('the index lock', () => {
  it('held past its lifetime (set by hand, with a long expiry) is taken away: approvals are not held up for good', async () => {
    const { kv, gate } = await setup();
    await kv.set('approvals', 'index.lock', { not: 'a daemon' }, 3600);
    const started = Date.now();
    const waiting = gate.ask(ask());
    await until(async () => (await gate.list()).length === 1, { timeoutMs: 15_000 });
    // A daemon's own lock lives 5 s: the stuck one is taken after 6 s of not changing.
    expect(Date.now() - started).toBeGreaterThan(5_000);
    await gate.decide(approvalId(ask()), 'denied', 'ops', null, anyRole);
    expect((await waiting).state).toBe('denied');
  }, 20_000);
});
