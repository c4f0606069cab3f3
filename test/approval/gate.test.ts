/**
 * The approval gate on the real embedded kv store: when a call needs approval, the first decision
 * wins (a person's or the timeout's), a call asked about again (a re-run after a restart) finds its
 * approval and its expiry, decisions are audited, and the role check is the caller's.
 */

import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { AuditEntry } from '../../src/audit/record.ts';
import { knownSecrets } from '../../src/audit/redact.ts';
import { ApprovalError } from '../../src/errors.ts';
import { openEmbeddedKvStore } from '../../src/kv/index.ts';
import { openRedisKvStore } from '../../src/kv/redis.ts';
import type { KvStore } from '../../src/kv/types.ts';
import { ApprovalGate, approvalReason, approvalStep } from '../../src/tools/approval/index.ts';
import type { ApprovalAsk } from '../../src/tools/approval/types.ts';
import { KNOWN_SECRET_MASK } from '../../src/tools/approval/view.ts';
import { testState } from '../helpers/state.ts';

const stores: KvStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function gate(audit: AuditEntry[] = []) {
  const store = await openEmbeddedKvStore({ dir: await mkdtemp(join(tmpdir(), 'approval-gate-')) });
  stores.push(store);
  const made = new ApprovalGate({
    state: testState(store),
    audit: { append: (entry) => audit.push(entry), flush: async () => {}, close: async () => {} },
    pollMs: 50,
  });
  return { gate: made, store };
}

function ask(overrides: Partial<ApprovalAsk> = {}): ApprovalAsk {
  return {
    thread: 't-1',
    listener: 'ops',
    tool: 'run_command',
    callId: 'm-1.call-1',
    args: { command: 'ls', password: 'hunter2-very-secret' },
    verdict: 'allow',
    ruleId: null,
    why: 'always',
    settings: { mode: 'always', timeoutMs: 600_000, role: 'operator', maxPending: 20, elicit: true },
    ...overrides,
  };
}

const anyRole = () => true;

describe('approvalReason', () => {
  const native = { sideEffect: false, source: 'native' as const, readOnly: true };
  it('never asks under never, always asks under always', () => {
    expect(approvalReason('never', { ...native, sideEffect: true }, 'warn')).toBeNull();
    expect(approvalReason('always', native, 'allow')).toBe('always');
  });
  it('destructive: a warn verdict, a side effect, or an external tool not marked read-only', () => {
    expect(approvalReason('destructive', native, 'allow')).toBeNull();
    expect(approvalReason('destructive', native, null)).toBeNull();
    expect(approvalReason('destructive', native, 'warn')).toContain('guard warned');
    expect(approvalReason('destructive', { ...native, sideEffect: true }, 'allow')).toContain('side effects');
    expect(approvalReason('destructive', { ...native, source: 'external', readOnly: false }, null)).toContain(
      'not marked read-only',
    );
    expect(approvalReason('destructive', { ...native, source: 'external', readOnly: true }, null)).toBeNull();
  });
});

describe('ApprovalGate', () => {
  it("lists a waiting call (arguments as they run, the daemon's own secrets masked), and the approval answers it; the audit has who and why", async () => {
    knownSecrets.set('test:gate', ['hunter2-very-secret']);
    onTestFinished(() => knownSecrets.delete('test:gate'));
    const audit: AuditEntry[] = [];
    const { gate: g } = await gate(audit);
    const requested: string[] = [];
    g.observe({ requested: (a) => requested.push(a.id) });
    const waiting = g.ask(ask());
    const [listed] = await waitFor(
      () => g.list(),
      (l) => l.length === 1,
    );
    expect(listed!.state).toBe('pending');
    expect(listed!.args).toEqual({ command: 'ls', password: KNOWN_SECRET_MASK });
    // The request is listed as soon as it is stored; observers hear of it just after.
    expect(
      await waitFor(
        async () => requested,
        (r) => r.length > 0,
      ),
    ).toEqual([listed!.id]);
    const decided = await g.decide(listed!.id, 'approved', 'ops', 'fine', anyRole);
    expect(decided).toMatchObject({ state: 'approved', decided_by: 'ops', reason: 'fine' });
    expect((await waiting).state).toBe('approved');
    expect(await g.list()).toEqual([]);
    expect(audit).toEqual([
      expect.objectContaining({
        type: 'approval',
        decision: 'approved',
        by: 'ops',
        reason: 'fine',
        approval: listed!.id,
      }),
    ]);
  });

  it('the first decision wins; a second is refused as decided', async () => {
    const { gate: g } = await gate();
    const waiting = g.ask(ask());
    const [a] = await waitFor(
      () => g.list(),
      (l) => l.length === 1,
    );
    await g.decide(a!.id, 'denied', 'ops', 'no', anyRole);
    await expect(g.decide(a!.id, 'approved', 'root', null, anyRole)).rejects.toMatchObject({
      code: 'approval.decided',
    });
    expect((await waiting).state).toBe('denied');
  });

  it('refuses a decider without the role, and an unknown id', async () => {
    const { gate: g } = await gate();
    void g.ask(
      ask({ settings: { mode: 'always', timeoutMs: 600_000, role: 'admin', maxPending: 20, elicit: true } }),
    );
    const [a] = await waitFor(
      () => g.list(),
      (l) => l.length === 1,
    );
    const error = await g
      .decide(a!.id, 'approved', 'ops', null, (role) => role === 'operator')
      .catch((e) => e);
    expect(error).toBeInstanceOf(ApprovalError);
    expect(error.code).toBe('approval.forbidden');
    await expect(g.decide('ap_nope', 'approved', 'ops', null, anyRole)).rejects.toMatchObject({
      code: 'approval.not_found',
    });
  });

  it('no answer in time is a denial by the organism', async () => {
    const audit: AuditEntry[] = [];
    const { gate: g } = await gate(audit);
    const decided = await g.ask(
      ask({ settings: { mode: 'always', timeoutMs: 200, role: 'operator', maxPending: 20, elicit: true } }),
    );
    expect(decided).toMatchObject({
      state: 'timed_out',
      decided_by: 'organism',
      reason: 'no decision within 200 ms',
    });
    expect(audit).toEqual([expect.objectContaining({ decision: 'timed_out', by: 'organism' })]);
  });

  it('a call asked about again (a re-run after a restart) finds the same approval, its expiry, and a decision made meanwhile', async () => {
    const { store } = await gate();
    // Two gates on one store stand for the process before the crash and the one after it.
    const before = new ApprovalGate({ state: testState(store), pollMs: 50 });
    void before.ask(ask());
    const [first] = await waitFor(
      () => before.list(),
      (l) => l.length === 1,
    );
    before.close();
    const after = new ApprovalGate({ state: testState(store), pollMs: 50 });
    const requested: string[] = [];
    after.observe({ requested: (a) => requested.push(a.id) });
    const [listed] = await after.list();
    expect(listed).toMatchObject({ id: first!.id, requested: first!.requested, expires: first!.expires });
    const waiting = after.ask(ask());
    await after.decide(first!.id, 'approved', 'ops', null, anyRole);
    expect((await waiting).state).toBe('approved');
    expect(requested).toEqual([]); // not asked a second time
    // Asked once more (another repeat): answered at once from the store.
    expect((await after.ask(ask())).state).toBe('approved');
  });

  it('the dispatcher step: never asks under never, denies with the reason, fails closed without a gate', async () => {
    const { gate: g } = await gate();
    const input = {
      thread: 't-2',
      listener: 'ops',
      tool: 'write_file',
      callId: 'm-2.call-1',
      args: {},
      verdict: null,
      ruleId: null,
      definition: { sideEffect: true, source: 'native' as const, readOnly: false },
    };
    const never = {
      mode: 'never' as const,
      timeoutMs: 1000,
      role: 'operator' as const,
      maxPending: 20,
      elicit: true,
    };
    expect(await approvalStep(undefined, { ...input, settings: never })).toBeNull();
    const destructive = { ...never, mode: 'destructive' as const };
    const closed = await approvalStep(undefined, { ...input, settings: destructive });
    expect(closed).toMatchObject({ status: 'refused', code: 'ApprovalDenied' });
    const step = approvalStep(g, { ...input, settings: destructive });
    const [a] = await waitFor(
      () => g.list(),
      (l) => l.length === 1,
    );
    await g.decide(a!.id, 'denied', 'ops', 'wrong file', anyRole);
    const refusal = await step;
    expect(refusal).toMatchObject({ status: 'refused', code: 'ApprovalDenied' });
    expect((refusal as { message: string }).message).toContain('denied by ops: wrong file');
  });
});

describe('ApprovalGate on Redis, shared by two daemons', () => {
  it('a call waiting on one daemon hears of the decision made on the other; the first decision wins', async () => {
    const keyPrefix = `test:approval:${randomUUID()}:`;
    const storeA = openRedisKvStore({ url: 'redis://127.0.0.1:6379', keyPrefix });
    const storeB = openRedisKvStore({ url: 'redis://127.0.0.1:6379', keyPrefix });
    stores.push(storeA, storeB);
    const audit: AuditEntry[] = [];
    const sink = {
      append: (entry: AuditEntry) => audit.push(entry),
      flush: async () => {},
      close: async () => {},
    };
    const a = new ApprovalGate({ state: testState(storeA), audit: sink, pollMs: 50 });
    const b = new ApprovalGate({ state: testState(storeB), audit: sink, pollMs: 50 });
    const waiting = a.ask(ask({ callId: 'redis-1.call-1' }));
    const [listed] = await waitFor(
      () => b.list(),
      (l) => l.length === 1,
    );
    // Decided on B: the call waiting on A hears of it through the store (no local waiter on B).
    await b.decide(listed!.id, 'approved', 'ops', 'from b', anyRole);
    expect(await waiting).toMatchObject({ state: 'approved', decided_by: 'ops', reason: 'from b' });
    await expect(a.decide(listed!.id, 'denied', 'root', 'from a', anyRole)).rejects.toMatchObject({
      code: 'approval.decided',
    });
    expect(audit).toHaveLength(1);
    expect(await a.list()).toEqual([]);
  });
});

async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('condition not met');
}
