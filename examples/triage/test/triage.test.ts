import { type TestedListener, testListener } from 'organism/testing';
import { afterEach, describe, expect, it } from 'vitest';
import billing from '../listeners/billing.ts';
import support from '../listeners/support.ts';
import triage from '../listeners/triage.ts';
import lookupCustomer from '../tools/lookup-customer.ts';

// triage on a real in-process bus, with the real billing and support as its peers and its own
// tool behind the real dispatcher: what `npx organism send --to triage ...` does, without a daemon.

const open: TestedListener[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

async function desk() {
  const t = await testListener(triage, {
    name: 'triage',
    peers: { billing, support },
    tools: [lookupCustomer],
  });
  open.push(t);
  return t;
}

describe('triage', () => {
  it('routes a refund request to billing, high priority for an enterprise customer', async () => {
    const t = await desk();
    const replies = await t.send(
      '<ticket><id>T-1</id><from>ada@example.com</from><subject>Refund for a double charge</subject></ticket>',
    );
    expect(replies.map((r) => [r.from, r.tag])).toEqual([['triage', 'routed']]);
    expect(replies[0]?.payload).toEqual({
      ticket: 'T-1',
      team: 'billing',
      priority: 'high',
      reference: 'B-0001',
    });
    // The whole thread: the lookup through the dispatcher, the hop to billing and its answer.
    expect(replies.messages.map((m) => `${m.from} -> ${m.to} [${m.kind}]`)).toEqual([
      `${replies.messages[0]?.from} -> triage [message]`,
      'triage -> lookup_customer [tool-call]',
      'lookup_customer -> triage [tool-result]',
      'triage -> billing [message]',
      'billing -> triage [response]',
      `triage -> ${replies.messages[0]?.from} [response]`,
    ]);
  });

  it('routes anything else to support, normal priority, an unknown sender included', async () => {
    const t = await desk();
    const [pro] = await t.send({
      id: 'T-2',
      from: 'grace@example.com',
      subject: 'The export button does nothing',
    });
    expect(pro?.payload).toEqual({ ticket: 'T-2', team: 'support', priority: 'normal', reference: 'S-0001' });
    const [stranger] = await t.send({
      id: 'T-3',
      from: 'who@example.net',
      subject: 'Hello?',
      body: 'Is anyone there',
    });
    expect(stranger?.payload).toMatchObject({ team: 'support', priority: 'normal' });
  });

  it('refuses a ticket without a valid sender before the handler runs', async () => {
    const t = await desk();
    await expect(
      t.send('<ticket><id>T-4</id><from>not an address</from><subject>x</subject></ticket>'),
    ).rejects.toThrow('field "from"');
  });

  it('looks the sender up whatever the case of the address', async () => {
    const t = await desk();
    const replies = await t.send({ id: 'T-5', from: 'ADA@Example.com', subject: 'Login is slow' });
    expect(replies[0]?.payload).toMatchObject({ team: 'support', priority: 'high' });
    const result = replies.messages.find((m) => m.kind === 'tool-result');
    expect(result?.payload).toContain('Ada Lovelace');
  });
});
