/** organism/testing: testListener() and testAgent(), as a listener author would use them. */
import { afterEach, describe, expect, it } from 'vitest';
import { defineListener, PayloadValidationError, type ToolDefinition } from '../../src/index.ts';
import { type TestedListener, testAgent, testListener } from '../../src/testing/index.ts';

const open: TestedListener[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});
const kept = <T extends TestedListener>(t: T): T => {
  open.push(t);
  return t;
};

const text = (tag: string) => ({
  tag,
  schema: {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
    additionalProperties: false,
  },
});

/** A stand-in peer that answers what it is sent, upper-cased. */
const shouter = defineListener<{ text: string }>({
  payload: text('shout'),
  response: text('shouted'),
  handler: (p, ctx) => ctx.respond({ text: p.text.toUpperCase() }),
});

const upper: ToolDefinition<{ text: string }, string> = {
  name: 'upper',
  description: 'Upper-cases text.',
  args: text('x').schema,
  readOnly: true,
  capability: 'read',
  source: 'native',
  run: async ({ text }) => text.toUpperCase(),
};

describe('testListener', () => {
  it('runs a listener module from its path and shows what it sent its peer', async () => {
    const t = kept(
      await testListener('listeners/greeter.ts', {
        name: 'greeter',
        peers: { shouter: defineListener({ payload: text('shout'), handler: () => {} }) },
      }),
    );
    const replies = await t.send('<greeting><name>Ada</name></greeting>');
    expect([...replies]).toEqual([]);
    expect(replies.messages.map((m) => `${m.from}->${m.to} ${m.payload}`)).toEqual([
      'test->greeter <greeting><name>Ada</name></greeting>',
      'greeter->shouter <shout><text>Hello, Ada!</text></shout>',
    ]);
  });

  it('keeps what the listener logged through ctx.log, with its listener, thread and fields', async () => {
    const t = kept(await testListener(new URL('../../listeners/printer.ts', import.meta.url)));
    const replies = await t.send('<print><text>hello</text><source>ada</source></print>');
    expect([...replies]).toEqual([]);
    expect(t.logs.filter((l) => l.listener === 'print')).toEqual([
      {
        level: 'info',
        msg: '[ada] hello',
        listener: 'print',
        thread: replies.thread,
        fields: { printed: 'hello' },
      },
    ]);
  });

  it('gives back the response, decoded by the listener response schema, for an object sent', async () => {
    const echo = defineListener<{ text: string }>({
      payload: text('echo'),
      response: {
        tag: 'echoed',
        schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      },
      handler: (p, ctx) => ctx.respond({ n: p.text.length }),
    });
    const t = kept(await testListener(echo));
    expect(t.name).toBe('echo');
    const replies = await t.send({ text: 'a < b' });
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ from: 'echo', kind: 'response', tag: 'echoed', payload: { n: 5 } });
    expect(replies.messages[0]!.payload).toBe('<echo><text>a &lt; b</text></echo>');
  });

  it('refuses a payload its schema refuses, as the daemon would', async () => {
    const t = kept(await testListener(shouter));
    await expect(t.send('<shout><words>x</words></shout>')).rejects.toBeInstanceOf(PayloadValidationError);
  });

  it('turns a handler that throws into a SystemError reply', async () => {
    const broken = defineListener({
      payload: text('job'),
      handler: () => {
        throw new Error('disk on fire');
      },
    });
    const t = kept(await testListener(broken));
    const [reply] = await t.send('<job><text>x</text></job>');
    expect(reply).toMatchObject({ from: 'system', kind: 'system-error', tag: 'SystemError' });
    expect(reply!.payload.code).toBe('handler.failed');
  });

  it('delivers a stand-in peer reply to onReply, in the same thread across sends', async () => {
    const relay = defineListener<{ text: string }>({
      payload: text('relay'),
      handler: (p, ctx) => ctx.send('shouter', { text: p.text }),
      onReply: (reply, ctx) => ctx.respond(`<heard><text>${String(reply.payload.text)}</text></heard>`),
    });
    const t = kept(await testListener(relay, { peers: { shouter } }));
    const first = await t.send('<relay><text>hi</text></relay>');
    expect(first.map((r) => r.xml)).toEqual(['<heard><text>HI</text></heard>']);
    const second = await t.send('<relay><text>again</text></relay>', { thread: first.thread });
    expect(second.thread).toBe(first.thread);
    expect(second.map((r) => r.payload)).toEqual([{ text: 'AGAIN' }]);
    expect(second.messages.filter((m) => m.to === 'test')).toHaveLength(2);
    expect(t.messages(first.thread)).toHaveLength(second.messages.length);
  });

  it('runs granted tools through the dispatcher and refuses the others', async () => {
    const caller = defineListener<{ text: string }>({
      payload: text('call'),
      handler: async (p, ctx) => {
        const result = await ctx.tools.call(p.text, { text: 'quiet' });
        return ctx.respond(`<result><status>${result.status}</status></result>`);
      },
    });
    const t = kept(await testListener(caller, { tools: [upper] }));
    const ok = await t.send('<call><text>upper</text></call>');
    expect(ok.map((r) => r.payload)).toEqual([{ status: 'ok' }]);
    expect(ok.messages.map((m) => m.kind)).toEqual(['message', 'tool-call', 'tool-result', 'response']);
    expect(ok.messages[2]!.payload).toContain('QUIET');
    const refused = await t.send('<call><text>delete_everything</text></call>');
    expect(refused.map((r) => r.payload)).toEqual([{ status: 'refused' }]);
  });
});

describe('testAgent', () => {
  it('plays the script: a tool call, then an answer built from its result; the model saw the task', async () => {
    const t = kept(
      await testAgent({
        name: 'helper',
        prompt: 'Shout what you are given.',
        tools: [upper],
        model: {
          scripts: [
            {
              when: 'shout (?<what>\\w+)',
              turns: [
                { tool_calls: [{ name: 'upper', args: { text: '{{match.what}}' } }] },
                { text: 'Shouted: {{result}}' },
              ],
            },
          ],
        },
      }),
    );
    const replies = await t.ask('please shout hello');
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ from: 'helper', kind: 'response', tag: 'answer' });
    expect(replies[0]!.xml).toContain('Shouted: HELLO');
    expect(t.requests).toHaveLength(2);
    expect(t.requests[0]!.system).toContain('Shout what you are given.');
    expect(JSON.stringify(t.requests[0]!.messages)).toContain('please shout hello');
  });
});
