/**
 * Approval by elicitation on the real gate (embedded kv) with a fake ClientChannel (the end-to-end
 * test, with the SDK's client over /mcp, is test/mcp/approval-elicitation.e2e.test.ts): accept
 * approves and decline denies as `<token> via MCP client <name>`, cancel leaves the call waiting for
 * the API, a decision elsewhere withdraws the question, and nobody is asked whose role could not
 * decide over the API, whose client offers no elicitation, or where approval_elicitation is off.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/record.ts';
import { openEmbeddedKvStore } from '../../src/kv/index.ts';
import type { KvStore } from '../../src/kv/types.ts';
import type {
  ClientChannel,
  ElicitRequestParams,
  ElicitResult,
} from '../../src/mcp/server/client-channel.ts';
import type { Role } from '../../src/server/auth.ts';
import { ApprovalGate } from '../../src/tools/approval/index.ts';
import type { Approval, ApprovalAsk } from '../../src/tools/approval/types.ts';
import { approvalLine } from '../../src/tools/approval/view.ts';
import { testState } from '../helpers/state.ts';

const stores: KvStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function gate(audit: AuditEntry[] = []) {
  const store = await openEmbeddedKvStore({ dir: await mkdtemp(join(tmpdir(), 'approval-elicit-')) });
  stores.push(store);
  return new ApprovalGate({
    state: testState(store),
    audit: { append: (entry) => audit.push(entry), flush: async () => {}, close: async () => {} },
    pollMs: 50,
  });
}

interface Asked {
  params: ElicitRequestParams;
  signal: AbortSignal | undefined;
}

function channel(
  answer: (asked: Asked) => ElicitResult | Promise<ElicitResult>,
  options: { role?: Role; form?: boolean } = {},
): ClientChannel & { asked: Asked[] } {
  const asked: Asked[] = [];
  return {
    asked,
    offers: {
      sampling: false,
      samplingTools: false,
      elicitation: { form: options.form ?? true, url: false },
    },
    client: { name: 'desk\u0007assistant', version: '2.1' },
    caller: { name: 'alice', role: options.role ?? 'operator' },
    createMessage: () => Promise.reject(new Error('no sampling')),
    async elicit(params, signal) {
      const one = { params, signal };
      asked.push(one);
      return answer(one);
    },
    log: () => {},
    progress: () => {},
  };
}

function ask(
  client: ClientChannel | undefined,
  overrides: Partial<ApprovalAsk['settings']> = {},
): ApprovalAsk {
  return {
    thread: 't-elicit',
    listener: 'ops',
    tool: 'run_command',
    callId: `m-${Math.random()}.call-1`,
    args: { command: 'touch approved.txt' },
    verdict: 'allow',
    ruleId: null,
    why: 'always',
    settings: {
      mode: 'always',
      timeoutMs: 600_000,
      role: 'operator',
      maxPending: 20,
      elicit: true,
      ...overrides,
    },
    ...(client ? { client } : {}),
  };
}

const never = () => new Promise<ElicitResult>(() => {});

async function until<T>(get: () => Promise<T> | T, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await get();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('approval by elicitation', () => {
  it('accept approves, as the token via the client (its name made printable), with the reason given; the form shows the line the CLI lists', async () => {
    const audit: AuditEntry[] = [];
    const g = await gate(audit);
    const client = channel(() => ({ action: 'accept', content: { reason: 'looks right' } }));
    const decided = await g.ask(ask(client));
    expect(decided).toMatchObject({
      state: 'approved',
      decided_by: 'alice via MCP client desk?assistant 2.1',
      reason: 'looks right',
    });
    const [one] = client.asked;
    const pending: Approval = {
      ...decided,
      state: 'pending',
      decided_by: null,
      decided_at: null,
      reason: null,
    };
    expect(one!.params).toMatchObject({
      mode: 'form',
      message: `A tool call waits for your approval (accept runs it, decline denies it):\n${approvalLine(pending)}`,
    });
    expect(one!.params.message).toContain('{"command":"touch approved.txt"}');
    expect(audit).toEqual([
      expect.objectContaining({
        type: 'approval',
        decision: 'approved',
        by: 'alice via MCP client desk?assistant 2.1',
        reason: 'looks right',
      }),
    ]);
  });

  it('decline denies; with no reason given the record says where it was declined', async () => {
    const g = await gate();
    const decided = await g.ask(ask(channel(() => ({ action: 'decline' }))));
    expect(decided).toMatchObject({
      state: 'denied',
      decided_by: 'alice via MCP client desk?assistant 2.1',
      reason: 'declined in the MCP client',
    });
  });

  it('cancel decides nothing: the call waits, and the API (decide) still decides it', async () => {
    const g = await gate();
    const client = channel(() => ({ action: 'cancel' }));
    const waiting = g.ask(ask(client));
    await until(
      () => client.asked.length,
      (n) => n === 1,
    );
    const [pending] = await until(
      () => g.list(),
      (l) => l.length === 1,
    );
    await new Promise((r) => setTimeout(r, 100));
    expect((await g.get(pending!.id))?.state).toBe('pending');
    await g.decide(pending!.id, 'approved', 'ops-token', null, () => true);
    expect(await waiting).toMatchObject({ state: 'approved', decided_by: 'ops-token' });
  });

  it('a decision made elsewhere first wins and withdraws the question (its signal aborts)', async () => {
    const g = await gate();
    const client = channel(never);
    const waiting = g.ask(ask(client));
    const [pending] = await until(
      () => g.list(),
      (l) => l.length === 1,
    );
    await until(
      () => client.asked.length,
      (n) => n === 1,
    );
    expect(client.asked[0]!.signal?.aborted).toBe(false);
    await g.decide(pending!.id, 'denied', 'ops-token', 'no', () => true);
    expect(await waiting).toMatchObject({ state: 'denied', decided_by: 'ops-token' });
    expect(client.asked[0]!.signal?.aborted).toBe(true);
  });

  it('nobody is asked whose role could not decide over the API, whose client offers no elicitation, or where approval_elicitation is off', async () => {
    const g = await gate();
    const viewer = channel(never, { role: 'viewer' });
    const operatorForAdmin = channel(never, { role: 'operator' });
    const noForm = channel(never, { form: false });
    const off = channel(never);
    const asks = [
      g.ask(ask(viewer)),
      g.ask(ask(operatorForAdmin, { role: 'admin' })),
      g.ask(ask(noForm)),
      g.ask(ask(off, { elicit: false })),
    ];
    const pending = await until(
      () => g.list(),
      (l) => l.length === 4,
    );
    // Given time to ask, had it meant to.
    await new Promise((r) => setTimeout(r, 150));
    expect([viewer, operatorForAdmin, noForm, off].map((c) => c.asked.length)).toEqual([0, 0, 0, 0]);
    // An admin's client would have been asked about the admin one.
    const admin = channel(never, { role: 'admin' });
    const adminAsk = g.ask(ask(admin, { role: 'admin' }));
    await until(
      () => admin.asked.length,
      (n) => n === 1,
    );
    for (const a of await g.list()) await g.decide(a.id, 'denied', 'cleanup', null, () => true);
    await Promise.all([...asks, adminAsk]);
    expect(pending).toHaveLength(4);
  });

  it('an elicitation the client fails (gone, refused) leaves the call waiting for the others', async () => {
    const g = await gate();
    const client = channel(() => Promise.reject(new Error('client gone')));
    const waiting = g.ask(ask(client));
    const [pending] = await until(
      () => g.list(),
      (l) => l.length === 1,
    );
    await until(
      () => client.asked.length,
      (n) => n === 1,
    );
    await new Promise((r) => setTimeout(r, 50));
    await g.decide(pending!.id, 'approved', 'ops-token', null, () => true);
    expect((await waiting).state).toBe('approved');
  });
});
