/**
 * organism/testing's approval policy: calls whose tool_config asks for approval wait at the daemon's
 * own gate, and the test's policy decides them in a person's place, seeing what a person would see
 * (the arguments as they run). Without a policy such calls are denied, saying how to give one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ApprovalRequest,
  NO_POLICY,
  POLICY_DECIDER,
  type TestedListener,
  TestKitError,
  type TestListenerOptions,
  testAgent,
  testListener,
} from '../../src/testing/index.ts';
import { call, caller } from './caller.ts';

const open: TestedListener[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

const HOOKS = { allowed_domains: ['hooks.example.com'], approval: 'always' } as const;

/** The caller with webhook granted under approval: always, and the given policy. */
async function start(options: TestListenerOptions = {}): Promise<TestedListener> {
  const t = await testListener(caller, {
    name: 'notifier',
    tools: ['webhook'],
    config: { tool_config: { webhook: HOOKS } },
    ...options,
  });
  open.push(t);
  return t;
}

const hook = (n: number) => ({ url: 'https://hooks.example.com/tickets', payload: { n } });

describe('approval policy', () => {
  it('no policy: the call is denied, the reason says how to give one, and nothing is sent', async () => {
    const t = await start();
    const result = await call(t, 'webhook', hook(1));
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ApprovalDenied' } });
    expect(result.error.message).toContain("pass approval: 'approve', 'deny' or a function of the request");
    expect(t.webhooks).toHaveLength(0);
    expect(t.approvals).toMatchObject([{ tool: 'webhook', state: 'denied', reason: NO_POLICY }]);
  });

  it("'approve': the call runs once approved; the decision and the call are on the audit record", async () => {
    const t = await start({ approval: 'approve' });
    expect(await call(t, 'webhook', hook(1))).toMatchObject({
      status: 'ok',
      value: { status_code: 200 },
    });
    expect(t.webhooks.map((w) => w.payload)).toEqual([{ n: 1 }]);
    const [decided] = t.approvals;
    expect(decided).toMatchObject({
      listener: 'notifier',
      tool: 'webhook',
      state: 'approved',
      decided_by: POLICY_DECIDER,
      why: 'always',
    });
    expect(t.audit.filter((r) => r.type === 'approval')).toMatchObject([
      { approval: decided!.id, decision: 'approved' },
    ]);
    expect(t.audit.filter((r) => r.type === 'call')).toMatchObject([
      { tool: 'webhook', outcome: 'ok', approval: decided!.id },
    ]);
  });

  it("'deny': the call is refused with the policy named, and nothing is sent", async () => {
    const t = await start({ approval: 'deny' });
    const result = await call(t, 'webhook', hook(1));
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ApprovalDenied' } });
    expect(result.error.message).toContain(`denied by ${POLICY_DECIDER}: approval: 'deny'`);
    expect(t.webhooks).toHaveLength(0);
    expect(t.approvals.map((a) => a.state)).toEqual(['denied']);
  });

  it('a function sees the request as a person would (the arguments as they run) and decides each call', async () => {
    const asked: ApprovalRequest[] = [];
    const t = await start({
      approval: async (request) => {
        asked.push(request);
        const { payload } = request.args as { payload: { n: number } };
        return payload.n < 10 ? true : { approve: false, reason: `ticket ${payload.n} is too many` };
      },
    });
    expect(await call(t, 'webhook', hook(1))).toMatchObject({ status: 'ok' });
    const denied = await call(t, 'webhook', hook(12));
    expect(denied).toMatchObject({ status: 'refused', error: { code: 'ApprovalDenied' } });
    expect(denied.error.message).toContain('ticket 12 is too many');
    // The arguments as they run: webhook's schema default (method POST) applied.
    expect(asked.map((r) => r.args)).toEqual([
      { ...hook(1), method: 'POST' },
      { ...hook(12), method: 'POST' },
    ]);
    expect(asked[0]).toMatchObject({
      tool: 'webhook',
      listener: 'notifier',
      why: 'always',
      state: 'pending',
    });
    expect(t.approvals.map((a) => [a.state, a.reason])).toEqual([
      ['approved', 'the approval policy answered true'],
      ['denied', 'ticket 12 is too many'],
    ]);
    expect(t.webhooks.map((w) => w.payload)).toEqual([{ n: 1 }]);
  });

  it('shows text that looks like a credential whole, as the approver of a daemon sees it (issue 25)', async () => {
    const ran: string[] = [];
    const shown: unknown[] = [];
    const command = 'X_TOKEN="$(echo PWNED > pwned.txt)" ls';
    const t = await start({
      tools: ['run_command'],
      fakes: {
        run_command: ({ command: c }: { command: string }) => {
          ran.push(c);
          return { exit_code: 0, stdout: '', stderr: '' };
        },
      },
      config: { tool_config: { run_command: { shell: true, approval: 'always' } } },
      approval: (request) => {
        shown.push(request.args);
        return true;
      },
    });
    expect(await call(t, 'run_command', { command })).toMatchObject({ status: 'ok' });
    expect(shown).toEqual([{ command }]);
    expect(ran).toEqual([command]);
  });

  it('a function that throws, or answers no decision, denies the call saying why', async () => {
    const t = await start({
      approval: (request) => {
        const { n } = (request.args as { payload: { n: number } }).payload;
        if (n === 1) throw new Error('policy broke');
        return 'yes' as never;
      },
    });
    const threw = await call(t, 'webhook', hook(1));
    expect(threw.error.message).toContain('the approval policy threw: policy broke');
    const vague = await call(t, 'webhook', hook(2));
    expect(vague.error.message).toContain('the approval policy answered "yes", which is no decision');
    expect(t.webhooks).toHaveLength(0);
  });

  it('asks only for calls whose tool_config wants approval (destructive: a read-only call runs)', async () => {
    const policy: ApprovalRequest[] = [];
    const t = await start({
      tools: ['key_value_get', 'key_value_set'],
      config: {
        tool_config: {
          key_value_get: { approval: 'destructive' },
          key_value_set: { approval: 'destructive' },
        },
      },
      approval: (request) => {
        policy.push(request);
        return false;
      },
    });
    expect(await call(t, 'key_value_get', { key: 'k' })).toMatchObject({ status: 'ok' });
    expect(await call(t, 'key_value_set', { key: 'k', value: 1 })).toMatchObject({ status: 'refused' });
    expect(policy.map((r) => [r.tool, r.why])).toEqual([
      ['key_value_set', expect.stringMatching(/^destructive/)],
    ]);
    expect(await t.kv.get('k')).toBeUndefined();
  });

  it('refuses a policy that is none, naming what to give', async () => {
    await expect(testListener(caller, { approval: 'yes' as never })).rejects.toThrow(TestKitError);
    await expect(testListener(caller, { approval: 'allow' as never })).rejects.toMatchObject({
      code: 'testing.invalid_option',
      message: expect.stringContaining(
        `approval: "allow" is not a policy; give 'approve', 'deny' or a function`,
      ),
    });
  });

  it('testAgent takes a policy too: the agent reads the denial and answers with it', async () => {
    const a = await testAgent({
      name: 'notifier',
      tools: ['webhook'],
      config: { tool_config: { webhook: HOOKS } },
      approval: (request) => (request.args as { url: string }).url.endsWith('/ok'),
      model: {
        scripts: [
          {
            when: 'notify (?<where>\\w+)',
            turns: [
              {
                tool_calls: [
                  {
                    name: 'webhook',
                    args: { url: 'https://hooks.example.com/{{match.where}}', payload: {} },
                  },
                ],
              },
              { text: 'Result: {{result}}' },
            ],
          },
        ],
      },
    });
    open.push(a);
    const [ok] = await a.ask('notify ok');
    expect(ok!.xml).toContain('Result: ');
    expect(sentTo(a)).toEqual(['https://hooks.example.com/ok']);
    const [no] = await a.ask('notify nope');
    expect(no!.xml).toContain('ApprovalDenied');
    expect(a.approvals.map((x) => x.state)).toEqual(['approved', 'denied']);
    expect(sentTo(a)).toEqual(['https://hooks.example.com/ok']);
  });
});

/** The URLs the webhook recorder got. */
function sentTo(t: TestedListener): string[] {
  return t.webhooks.map((w) => w.url);
}
