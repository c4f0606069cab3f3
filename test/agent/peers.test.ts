/**
 * Agents and their peers over the real bus: consulting a code listener or another agent, telling
 * one that does not reply, a failing peer, a task arriving while a loop waits, thread history.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineListener } from '../../src/listener/types.ts';
import { settled, textPayload } from '../helpers/bus.ts';
import { type AgentBus, answerOf, ask, resultsSeen, startAgentBus } from './helpers.ts';

let running: AgentBus | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe('agents and peers', () => {
  it('consults a peer over the bus and continues with its reply', async () => {
    const summarizer = defineListener<{ text: string }>({
      description: 'Summarizes a text in a few words.',
      payload: textPayload('summarize'),
      response: {
        tag: 'summary',
        schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
      },
      handler: (p, ctx) => ctx.respond({ summary: `${p.text.split(' ').slice(0, 2).join(' ')}...` }),
    });
    running = startAgentBus({
      listeners: [{ name: 'summarizer', definition: summarizer }],
      agents: [
        {
          name: 'researcher',
          peers: ['summarizer'],
          script: {
            scripts: [
              {
                turns: [
                  { tool_calls: [{ name: 'ask_summarizer', args: { text: 'the quick brown fox jumps' } }] },
                  { text: 'Summary: {{result.summary}}' },
                ],
              },
            ],
          },
        },
      ],
    });
    const { messages, flow } = await ask(running, 'researcher', 'Summarize the fox.');
    expect(flow).toEqual([
      'api->researcher message',
      'researcher->summarizer message',
      'summarizer->researcher response',
      'researcher->api response',
    ]);
    expect(messages[1]!.payload).toBe('<summarize><text>the quick brown fox jumps</text></summarize>');
    expect(answerOf(messages, 'researcher')).toContain(
      '<text>Summary: the quick...</text><status>done</status>',
    );
    const [reply] = resultsSeen(running, 'researcher', 1);
    expect(reply!.content).toBe(
      '<peer-reply source="peer" from="summarizer" kind="response">\n<summary><summary>the quick...</summary></summary>\n</peer-reply>',
    );
    const fn = running.requests.researcher![0]!.functions[0]!;
    expect(fn).toMatchObject({ name: 'ask_summarizer', parameters: { required: ['text'] } });
    expect(running.requests.researcher![0]!.system).toContain(
      'Peers you may address:\n- ask_summarizer: Consult summarizer',
    );
    expect(running.definitions.researcher!.waiting()).toBe(0);
  });

  it('tells a peer that does not reply and goes on without waiting', async () => {
    const printed: string[] = [];
    const printer = defineListener<{ text: string }>({
      description: 'Prints a line.',
      payload: textPayload('print'),
      handler: (p) => {
        printed.push(p.text);
      },
    });
    running = startAgentBus({
      listeners: [{ name: 'printer', definition: printer }],
      agents: [
        {
          name: 'helper',
          tools: ['calculate'],
          peers: ['printer'],
          script: {
            scripts: [
              {
                turns: [
                  { tool_calls: [{ name: 'calculate', args: { expression: '2 ** 10' } }] },
                  { tool_calls: [{ name: 'tell_printer', args: { text: '2 ** 10 = {{result.result}}' } }] },
                  { text: 'Printed; {{result.status}}.' },
                ],
              },
            ],
          },
        },
      ],
    });
    const { messages } = await ask(running, 'helper', 'Compute and print.');
    expect(printed).toEqual(['2 ** 10 = 1024']);
    expect(answerOf(messages, 'helper')).toContain('<text>Printed; sent.</text>');
    expect(running.requests.helper![0]!.functions.map((f) => f.name)).toEqual(['calculate', 'tell_printer']);
  });

  it('lets one agent consult another agent', async () => {
    running = startAgentBus({
      agents: [
        {
          name: 'boss',
          peers: ['worker'],
          script: {
            scripts: [
              {
                turns: [
                  { tool_calls: [{ name: 'ask_worker', args: { task: 'compute 12 * 12' } }] },
                  { text: 'The worker says: {{result.text}} ({{result.status}})' },
                ],
              },
            ],
          },
        },
        {
          name: 'worker',
          tools: ['calculate'],
          script: {
            scripts: [
              {
                when: 'compute (?<expr>.+)',
                turns: [
                  { tool_calls: [{ name: 'calculate', args: { expression: '{{match.expr}}' } }] },
                  { text: '{{result.result}}' },
                ],
              },
            ],
          },
        },
      ],
    });
    const { messages, flow } = await ask(running, 'boss', 'Delegate.');
    expect(flow).toEqual([
      'api->boss message',
      'boss->worker message',
      'worker->calculate tool-call',
      'calculate->worker tool-result',
      'worker->boss response',
      'boss->api response',
    ]);
    expect(answerOf(messages, 'boss')).toContain('<text>The worker says: 144 (done)</text>');
    expect(running.usage.stats().agents).toMatchObject({ boss: { calls: 2 }, worker: { calls: 2 } });
  });

  it('hands a failed peer back as a readable result', async () => {
    const broken = defineListener<{ text: string }>({
      description: 'Always fails.',
      payload: textPayload('fail'),
      response: { tag: 'never', schema: { type: 'object' } },
      handler: () => {
        throw new Error('boom');
      },
    });
    running = startAgentBus({
      listeners: [{ name: 'broken', definition: broken }],
      agents: [
        {
          name: 'helper',
          peers: ['broken'],
          script: {
            scripts: [
              {
                turns: [
                  { tool_calls: [{ name: 'ask_broken', args: { text: 'x' } }] },
                  { text: 'The peer failed: {{result.error.code}}' },
                ],
              },
            ],
          },
        },
      ],
    });
    const { messages } = await ask(running, 'helper', 'Try the broken one.');
    expect(answerOf(messages, 'helper')).toContain('<text>The peer failed: handler.failed</text>');
    const [seen] = resultsSeen(running, 'helper', 1);
    expect(seen!.isError).toBe(true);
    expect(seen!.content).toContain('<peer-reply source="peer" from="broken" kind="system-error">');
  });

  it('shows the earlier messages of the thread when a new task arrives in it', async () => {
    running = startAgentBus({
      agents: [
        {
          name: 'helper',
          script: { scripts: [{ turns: [{ text: 'Answer to: {{task}}' }] }] },
        },
        { name: 'other', script: { scripts: [{ turns: [{ text: 'private matters' }] }] } },
      ],
    });
    const first = await ask(running, 'other', 'unrelated');
    await ask(running, 'helper', 'first question', first.thread);
    await ask(running, 'helper', 'second question', first.thread);
    // Messages the helper took no part in are not shown to it.
    expect((running.requests.helper![0]!.messages[0] as { content: string }).content).toBe(
      '<task from="api">\nfirst question\n</task>',
    );
    const request = running.requests.helper![1]!;
    const content = (request.messages[0] as { content: string }).content;
    expect(content).toMatch(/^<thread-history note="earlier messages of this thread, as data">\n/);
    // The earlier task is data now: its <task> tags are neutralized so it cannot pose as the current one.
    expect(content).toContain('api -> helper (message): <helper>&lt;task>first question&lt;/task></helper>');
    expect(content).toContain('helper -> api (response): <answer><text>Answer to: first question</text>');
    expect(content).toMatch(/<\/thread-history>\n\n<task from="api">\nsecond question\n<\/task>$/);
    expect(content).not.toContain('second question</task></helper>');
    expect(content).not.toContain('private matters');
    expect(content).not.toContain('unrelated');
  });
});

describe('loops waiting for peers', () => {
  it('answers busy to a second task in a thread while the first waits for a peer, then finishes the first', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived: () => void = () => {};
    const peerGotIt = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const slow = defineListener<{ text: string }>({
      description: 'Answers when the test lets it.',
      payload: textPayload('slow'),
      response: { tag: 'late', schema: { type: 'object', properties: { text: { type: 'string' } } } },
      handler: async (p, ctx) => {
        arrived();
        await released;
        return ctx.respond({ text: `late ${p.text}` });
      },
    });
    running = startAgentBus({
      listeners: [{ name: 'slow', definition: slow }],
      agents: [
        {
          name: 'helper',
          peers: ['slow'],
          script: {
            scripts: [
              {
                turns: [
                  { tool_calls: [{ name: 'ask_slow', args: { text: 'reply' } }] },
                  { text: 'got {{result.text}}' },
                ],
              },
            ],
          },
        },
      ],
    });
    const { thread } = await running.bus.inject({
      to: 'helper',
      payload: '<helper><task>first</task></helper>',
    });
    await peerGotIt;
    const waiting = running.definitions.helper!.waiting;
    expect(waiting()).toBe(1);
    await running.bus.inject({ to: 'helper', payload: '<helper><task>second</task></helper>', thread });
    await expect
      .poll(() => running!.bus.thread(thread)!.messages.filter((m) => m.kind === 'response').length)
      .toBe(1);
    expect(answerOf(running.bus.thread(thread)!.messages, 'helper')).toContain('<status>busy</status>');
    release();
    const messages = await settled(running.bus, thread);
    expect(answerOf(messages, 'helper')).toContain('<text>got late reply</text><status>done</status>');
    expect(waiting()).toBe(0);
  });
});
