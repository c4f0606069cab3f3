/**
 * An agent's task resumes from its thread's history in a process that does not hold its loop (a
 * restart): run 1 on a real bus records turns 1 and 2 and is cut off in its third model call; run 2
 * is a fresh agent (fresh loop, fresh usage counter, fresh provider) reading the same history, to
 * which the task is delivered again. It plays turns 3 to 5 only, makes no call of turns 1-2 again,
 * and counts their tokens against its budget.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/agent/client.ts';
import { createAgentDefinition } from '../../src/agent/definition.ts';
import type { AgentFunction } from '../../src/agent/prompt.ts';
import { createScriptedProvider, type Script } from '../../src/agent/providers/scripted.ts';
import { decodeTurn, encodeTurn } from '../../src/agent/record.ts';
import { rebuildTask } from '../../src/agent/resume.ts';
import type { CompletionRequest, Provider } from '../../src/agent/types.ts';
import { UsageTracker } from '../../src/agent/usage.ts';
import { ThreadHistory } from '../../src/bus/history/index.ts';
import type { MessageView } from '../../src/bus/message.ts';
import type { HandlerContext, Outgoing } from '../../src/listener/types.ts';
import { defineListener } from '../../src/listener/types.ts';
import { testConfig, until } from '../../src/testing/index.ts';
import type { ToolDefinition, ToolResult } from '../../src/tools/types.ts';
import { listenerSpec, settled, textPayload } from '../helpers/bus.ts';
import { type AgentBus, answerOf, recording, startAgentBus } from './helpers.ts';

let running: AgentBus | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

const per = { input: 90, output: 10 };
/** Five turns, tool calls in the first four; 100 tokens each. */
const SCRIPT: Script = {
  name: 'five',
  scripts: [
    {
      turns: [
        { text: 'Turn 1.', tool_calls: [{ name: 'calculate', args: { expression: '1 + 1' } }], usage: per },
        {
          text: 'Turn 2.',
          tool_calls: [
            { name: 'calculate', args: { expression: '{{result.result}} * 10' } },
            { name: 'effect', args: { n: 2 } },
          ],
          usage: per,
        },
        {
          text: 'Turn 3.',
          tool_calls: [{ name: 'calculate', args: { expression: '{{all_results.1.result}} + 1' } }],
          usage: per,
        },
        { text: 'Turn 4.', tool_calls: [{ name: 'effect', args: { n: 4 } }], usage: per },
        { text: 'Done: {{all_results.3.result}} and {{result.n}}.', usage: per },
      ],
    },
  ],
};

/** A side-effecting tool that counts its runs by call id. */
function effectTool(runs: string[]): ToolDefinition {
  return {
    name: 'effect',
    description: 'Has an effect outside the organism.',
    args: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    readOnly: false,
    sideEffect: true,
    capability: 'write',
    source: 'native',
    run: async (args: { n: number }, ctx: { callId: string }) => {
      runs.push(ctx.callId);
      return { n: args.n };
    },
  } as unknown as ToolDefinition;
}

/** A provider that never answers its `hang`-th request (0-based): the model call in flight at the crash. */
function hangingAt(hang: number) {
  return (_agent: string, provider: Provider): Provider => {
    let n = 0;
    return {
      ...provider,
      complete: (request, signal) =>
        n++ === hang ? new Promise(() => {}) : provider.complete(request, signal),
    };
  };
}

const turnsOf = (messages: readonly MessageView[]) =>
  messages.filter((m) => m.kind === 'model-turn').map((m) => decodeTurn(m.payload)!);

/** Run 1: the task on a real bus until its third model call is in flight. */
async function firstRun(history: ThreadHistory, runs: string[], budget?: number) {
  running = startAgentBus({
    history,
    tools: [effectTool(runs)],
    provider: hangingAt(2),
    agents: [
      {
        name: 'worker',
        tools: ['calculate', 'effect'],
        script: SCRIPT,
        ...(budget !== undefined ? { budget: { tokens: budget } } : {}),
      },
    ],
  });
  const { thread } = await running.bus.inject({
    to: 'worker',
    payload: '<worker><task>Do the five steps.</task></worker>',
  });
  // Turn 2 recorded and both its calls answered; the third model call never returns.
  const messages = await until(() => {
    const all = running!.bus.thread(thread)?.messages ?? [];
    return all.filter((m) => m.kind === 'tool-result').length === 3 && running!.requests.worker!.length === 2
      ? all
      : undefined;
  });
  return { thread, messages };
}

/** Run 2: a fresh agent, as after a restart, reading `history`; the task is delivered again. */
/** A fresh agent, as after a restart or a reload: its own loop, usage counter and provider. */
function freshAgent(setup: {
  name: string;
  tools: string[];
  peers?: string[];
  script: Script;
  history: (thread: string) => readonly MessageView[] | undefined;
  record: ThreadHistory;
  budget?: number;
}) {
  const [config] = testConfig({
    listeners: [
      {
        name: setup.name,
        description: `${setup.name}, a test agent.`,
        agent: true,
        tools: setup.tools,
        peers: setup.peers ?? [],
        ...(setup.budget !== undefined ? { budget: { tokens: setup.budget } } : {}),
      },
    ],
  }).listeners;
  const provider = recording(createScriptedProvider({ script: setup.script }));
  const usage = new UsageTracker();
  const definition = createAgentDefinition(config!, {
    llm: new LlmClient([{ provider }], { strategy: 'failover', retries: 0 }),
    tools: (name) =>
      setup.tools.includes(name) ? { description: `${name}, a tool.`, args: { type: 'object' } } : undefined,
    peers: () => ({ description: 'a peer', schema: textPayload('ping').schema, replies: true }),
    usage,
    history: setup.history,
    record: (thread, entry) => setup.record.append(thread, entry),
  });
  return { config, definition, requests: provider.requests as CompletionRequest[], usage };
}

/** Run 2: a fresh worker reading `history`; the task is delivered again. */
function secondRun(history: () => readonly MessageView[], record: ThreadHistory, budget?: number) {
  return freshAgent({
    name: 'worker',
    tools: ['calculate', 'effect'],
    script: SCRIPT,
    history,
    record,
    ...(budget !== undefined ? { budget } : {}),
  });
}

/** A peer that answers `<ping>` with `<pong>`, once `gate` (if any) lets it. */
function pingPeer(gate?: { arrived(): void; released: Promise<void> }) {
  return defineListener<{ text: string }>({
    description: 'Answers a ping.',
    payload: textPayload('ping'),
    response: { tag: 'pong', schema: { type: 'object', properties: { text: { type: 'string' } } } },
    handler: async (p, ctx) => {
      gate?.arrived();
      await gate?.released;
      return ctx.respond({ text: `pong ${p.text}` });
    },
  });
}

/** A fresh `helper` on PEER_SCRIPT, reading the bus's history. */
function freshHelper(bus: AgentBus['bus'], history: ThreadHistory) {
  return freshAgent({
    name: 'helper',
    tools: ['calculate'],
    peers: ['slow'],
    script: PEER_SCRIPT,
    history: (t) => bus.thread(t)?.messages,
    record: history,
  });
}

/** Asks the peer, calculates, answers with both. */
const PEER_SCRIPT: Script = {
  name: 'peer',
  scripts: [
    {
      turns: [
        { text: 'Asking.', tool_calls: [{ name: 'ask_slow', args: { text: 'hi' } }], usage: per },
        { tool_calls: [{ name: 'calculate', args: { expression: '2 + 3' } }], usage: per },
        { text: 'Got {{all_results.0.text}} and {{result.result}}.', usage: per },
      ],
    },
  ],
};

/** The handler's context for the task delivered again; its tool calls are answered by `answer`. */
function context(thread: string, answer: (name: string, args: any) => ToolResult) {
  const calls: Array<{ name: string; args: unknown; key: string | undefined }> = [];
  const ctx: HandlerContext = {
    thread,
    from: 'api',
    self: 'worker',
    tag: 'worker',
    peers: [],
    usage: '',
    signal: new AbortController().signal,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    tools: {
      call: async (name, args, key) => {
        calls.push({ name, args, key });
        return answer(name, args);
      },
    },
    respond: (payload) => ({ kind: 'respond', payload }),
    send: (to, payload) => ({ kind: 'send', to, payload }),
  };
  return { ctx, calls };
}

/** Answers calculate (`a + b`, `a * b`) and effect as the real tools would. */
const calculate = (_name: string, args: { expression?: string; n?: number }): ToolResult => {
  if (args.expression === undefined) return { status: 'ok', tool: 'effect', value: { n: args.n } };
  const [a, op, b] = args.expression.split(' ');
  const result = op === '*' ? Number(a) * Number(b) : Number(a) + Number(b);
  return { status: 'ok', tool: 'calculate', value: { result, expression: args.expression } };
};

const answer = (out: unknown) => {
  const list = (Array.isArray(out) ? out : [out]) as Outgoing[];
  return list.find((o) => o.kind === 'respond') as { payload: Record<string, unknown> } | undefined;
};

describe('an agent resuming its task from the thread history', () => {
  it('records each model turn with its calls and the tokens used so far', async () => {
    const history = new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 });
    const { messages } = await firstRun(history, []);
    const task = messages[0]!;
    expect(messages.map((m) => `${m.from}->${m.to} ${m.kind}`)).toEqual([
      'api->worker message',
      'worker->worker model-turn',
      'worker->calculate tool-call',
      'calculate->worker tool-result',
      'worker->worker model-turn',
      'worker->calculate tool-call',
      'worker->effect tool-call',
      // The two calls of turn 2 run in parallel: their results come in either order.
      ...messages.slice(7, 9).map((m) => `${m.from}->${m.to} ${m.kind}`),
    ]);
    const [one, two] = turnsOf(messages);
    expect(one).toMatchObject({
      task: task.id,
      turn: 1,
      text: 'Turn 1.',
      threadTokens: 100,
      backend: 'scripted/five',
    });
    expect(one!.calls).toEqual([
      {
        id: 'script_0_0',
        name: 'calculate',
        args: { expression: '1 + 1' },
        key: expect.stringMatching(/^turn-1\.call-0\.[0-9a-f]{12}$/),
      },
    ]);
    expect(two).toMatchObject({ turn: 2, threadTokens: 200, usage: { input: 90, output: 10 } });
    expect(two!.calls.map((c) => c.args)).toEqual([{ expression: '2 * 10' }, { n: 2 }]);
    // A call's id is the task message's id and its key; its result's id names the call.
    expect(messages[2]!.id).toBe(`${task.id}.${one!.calls[0]!.key}`);
    expect(messages[3]!.id).toBe(`${task.id}.${one!.calls[0]!.key}.result`);
  });

  it('plays turns 3 to 5 only after a restart, makes no call of turns 1-2 again, and answers', async () => {
    const history = new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 });
    const runs: string[] = [];
    const { thread } = await firstRun(history, runs);
    expect(runs).toHaveLength(1);
    const second = secondRun(() => history.messages(thread)!.messages, history);
    const { ctx, calls } = context(thread, calculate);
    const out = await second.definition.handler({ task: 'Do the five steps.' }, ctx);

    // The model was asked three times, with turns 1 and 2 already in the conversation.
    expect(second.requests).toHaveLength(3);
    expect(second.requests[0]!.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(second.requests[0]!.messages[0]).toEqual({
      role: 'user',
      content: '<task from="api">\nDo the five steps.\n</task>',
    });
    const seen = second.requests[0]!.messages[4]!;
    expect(seen.role === 'tool' && seen.results.map((r) => r.data)).toEqual([
      { result: 20, expression: '2 * 10' },
      { n: 2 },
    ]);
    // Only the calls of turns 3 and 4, named by their turn.
    expect(calls.map((c) => [c.name, c.args, c.key?.replace(/\.[0-9a-f]{12}$/, '')])).toEqual([
      ['calculate', { expression: '20 + 1' }, 'turn-3.call-0'],
      ['effect', { n: 4 }, 'turn-4.call-0'],
    ]);
    expect(answer(out)!.payload).toEqual({
      text: 'Done: 21 and 4.',
      status: 'done',
      turns: 5,
      backend: 'scripted/five',
    });
    // The budget's count includes turns 1-2 (run 1's tokens), then adds 3 to 5.
    expect(second.usage.threadTokens('worker', thread)).toBe(500);
    const turns = turnsOf(history.messages(thread)!.messages);
    expect(turns.map((t) => [t.turn, t.threadTokens])).toEqual([
      [1, 100],
      [2, 200],
      [3, 300],
      [4, 400],
      [5, 500],
    ]);
  });

  it('makes a call of the interrupted turn again, with the same key, only when its result is missing', async () => {
    const history = new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 });
    const { thread, messages } = await firstRun(history, []);
    // The crash came after turn 2's calculate answered and before its effect did.
    const lost = messages.find((m) => m.from === 'effect' && m.kind === 'tool-result')!;
    const shown = messages.filter((m) => m !== lost);
    const made = messages.find((m) => m.to === 'effect' && m.kind === 'tool-call')!;
    const second = secondRun(
      () => [...shown, ...history.messages(thread)!.messages.slice(messages.length)],
      history,
    );
    const { ctx, calls } = context(thread, calculate);
    const out = await second.definition.handler({ task: 'Do the five steps.' }, ctx);
    expect(calls.map((c) => c.name)).toEqual(['effect', 'calculate', 'effect']);
    // The same id as the call made before the crash: a side-effecting tool acts once.
    expect(`${messages[0]!.id}.${calls[0]!.key}`).toBe(made.id);
    expect(second.requests).toHaveLength(3);
    expect(answer(out)!.payload).toMatchObject({ status: 'done', turns: 5 });
  });

  it('counts the tokens of turns before the restart against budget.tokens', async () => {
    const history = new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 });
    const { thread } = await firstRun(history, [], 350);
    const second = secondRun(() => history.messages(thread)!.messages, history, 350);
    const { ctx } = context(thread, calculate);
    const out = await second.definition.handler({ task: 'Do the five steps.' }, ctx);
    // 200 before the restart; turns 3 and 4 make 400 >= 350: no fifth turn.
    expect(second.requests).toHaveLength(2);
    expect(answer(out)!.payload).toMatchObject({ status: 'budget', turns: 4 });
    expect(String(answer(out)!.payload.text)).toContain('400 of 350 tokens used in this thread');
  });

  it('answers again from the record when the task had already reached its final turn', async () => {
    const history = new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 });
    const { thread } = await firstRun(history, []);
    const first = secondRun(() => history.messages(thread)!.messages, history);
    await first.definition.handler({ task: 'Do the five steps.' }, context(thread, calculate).ctx);
    // Delivered once more (its answer was not confirmed before a crash): no model call, same answer.
    const again = secondRun(() => history.messages(thread)!.messages, history);
    const { ctx, calls } = context(thread, calculate);
    const out = await again.definition.handler({ task: 'Do the five steps.' }, ctx);
    expect(again.requests).toHaveLength(0);
    expect(calls).toHaveLength(0);
    expect(answer(out)!.payload).toMatchObject({ text: 'Done: 21 and 4.', status: 'done', turns: 5 });
  });

  it('starts a new task in the same thread afresh', async () => {
    running = startAgentBus({
      history: new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 }),
      tools: [effectTool([])],
      agents: [{ name: 'worker', tools: ['calculate', 'effect'], script: SCRIPT }],
    });
    const { thread } = await running.bus.inject({
      to: 'worker',
      payload: '<worker><task>One.</task></worker>',
    });
    await until(() =>
      running!.bus.thread(thread)?.messages.some((m) => m.kind === 'response') ? true : undefined,
    );
    await running.bus.inject({ to: 'worker', payload: '<worker><task>Two.</task></worker>', thread });
    const messages = await until(() => {
      const all = running!.bus.thread(thread)?.messages ?? [];
      return all.filter((m) => m.kind === 'response').length === 2 ? all : undefined;
    });
    const turns = turnsOf(messages);
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 4, 5, 1, 2, 3, 4, 5]);
    expect(new Set(turns.map((t) => t.task)).size).toBe(2);
    // One budget across the thread's tasks.
    expect(turns.at(-1)!.threadTokens).toBe(1000);
  });

  it("goes on when a peer's reply arrives for a loop the process no longer holds (a reload in between)", async () => {
    let arrived!: () => void;
    const peerGotIt = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = pingPeer({ arrived: () => arrived(), released });
    const script = PEER_SCRIPT;
    const history = new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 });
    running = startAgentBus({
      history,
      listeners: [{ name: 'slow', definition: slow }],
      agents: [{ name: 'helper', tools: ['calculate'], peers: ['slow'], script }],
    });
    const { thread } = await running.bus.inject({
      to: 'helper',
      payload: '<helper><task>Ask slow.</task></helper>',
    });
    await peerGotIt;
    // Another task meanwhile is refused as busy; it is not the one the reply belongs to.
    const bus = running.bus;
    await bus.inject({ to: 'helper', payload: '<helper><task>Me too.</task></helper>', thread });
    await until(() =>
      bus.thread(thread)?.messages.some((m) => m.payload.includes('<status>busy</status>'))
        ? true
        : undefined,
    );
    // The agent is swapped for a fresh one (as a reload does): the waiting loop is gone with the old.
    const { config, definition: fresh, requests } = freshHelper(bus, history);
    bus.reconfigure([
      listenerSpec({ name: 'helper', definition: fresh, peers: ['slow'], config }),
      listenerSpec({ name: 'slow', definition: slow }),
    ]);
    release();
    await until(() =>
      bus.thread(thread)?.messages.some((m) => m.from === 'helper' && m.kind === 'response')
        ? true
        : undefined,
    );
    const messages = await settled(bus, thread);
    expect(answerOf(messages, 'helper')).toBe(
      '<answer><text>Got pong hi and 5.</text><status>done</status><turns>3</turns><backend>scripted/peer</backend></answer>',
    );
    // The fresh agent was asked for turns 2 and 3 only, with the peer's reply in the conversation.
    expect(requests).toHaveLength(2);
    const seen = requests[0]!.messages;
    expect(seen.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(seen[2]!.role === 'tool' && seen[2]!.results[0]!.content).toContain('kind="response"');
    expect(messages.filter((m) => m.to === 'slow' && m.kind === 'message')).toHaveLength(1);
    expect(turnsOf(messages).map((t) => [t.turn, t.threadTokens])).toEqual([
      [1, 100],
      [2, 200],
      [3, 300],
    ]);
  });

  it('goes on from the last turn recorded after the reply, when the reply is delivered again', async () => {
    const slow = pingPeer();
    const script = PEER_SCRIPT;
    const history = new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 });
    running = startAgentBus({
      history,
      provider: hangingAt(2),
      listeners: [{ name: 'slow', definition: slow }],
      agents: [{ name: 'helper', tools: ['calculate'], peers: ['slow'], script }],
    });
    const bus = running.bus;
    const { thread } = await bus.inject({ to: 'helper', payload: '<helper><task>Ask slow.</task></helper>' });
    // The reply's run took turn 2 and is cut off in its third model call.
    const messages = await until(() => {
      const all = bus.thread(thread)?.messages ?? [];
      return all.some((m) => m.from === 'calculate' && m.kind === 'tool-result') ? all : undefined;
    });
    const reply = messages.find((m) => m.from === 'slow' && m.kind === 'response')!;
    const { definition, requests } = freshHelper(bus, history);
    const { ctx, calls } = context(thread, calculate);
    const out = await definition.onReply!(
      { tag: 'pong', kind: 'response', payload: { text: 'pong hi' }, xml: reply.payload },
      { ...ctx, from: 'slow', self: 'helper', tag: 'pong' },
    );
    expect(requests).toHaveLength(1);
    expect(calls).toHaveLength(0);
    expect(answer(out)!.payload).toMatchObject({ text: 'Got pong hi and 5.', status: 'done', turns: 3 });
  });

  it('records arguments redacted, and does not make again a cut-off call whose arguments lost a secret', () => {
    const view = (id: string, from: string, to: string, kind: MessageView['kind'], payload: string) =>
      ({ id, from, to, kind, payload, time: '' }) as MessageView;
    const payload = encodeTurn({
      task: 'T',
      turn: 1,
      text: 'Calling.',
      calls: [
        {
          id: 'c1',
          name: 'calculate',
          args: { expression: '1 + 1', api_key: 'abc-Secret-123' },
          key: 'turn-1.call-0.aaaaaaaaaaaa',
        },
        { id: 'c2', name: 'calculate', args: { expression: '2 + 2' }, key: 'turn-1.call-1.bbbbbbbbbbbb' },
      ],
      usage: { input: 90, output: 10 },
      threadTokens: 100,
      backend: 'scripted/x',
    });
    expect(payload).not.toContain('abc-Secret-123');
    expect(decodeTurn(payload)!.calls).toMatchObject([
      { args: { expression: '1 + 1', api_key: '[REDACTED]' }, redacted: true },
      { args: { expression: '2 + 2' } },
    ]);
    const tool = { kind: 'tool', name: 'calculate', target: 'calculate', source: 'native' } as AgentFunction;
    const rebuilt = rebuildTask(
      [
        view('T', 'api', 'worker', 'message', '<worker><task>x</task></worker>'),
        view('T.turn-1', 'worker', 'worker', 'model-turn', payload),
      ],
      0,
      'worker',
      { functions: new Map([['calculate', tool]]), resultBytes: 4096 },
    )!;
    expect(rebuilt.turns).toBe(1);
    // The redacted call is answered with a refusal; the other is left to be made again.
    expect(rebuilt.results.get('c1')).toMatchObject({
      isError: true,
      data: { error: { code: 'NotRepeated' } },
    });
    expect(rebuilt.results.has('c2')).toBe(false);
  });

  it('resumes the task delivered again though another task came meanwhile and was refused as busy', async () => {
    const history = new ThreadHistory({ maxPerThread: 1000, maxThreads: 100 });
    const { thread } = await firstRun(history, []);
    await running!.bus.inject({ to: 'worker', payload: '<worker><task>Another.</task></worker>', thread });
    await until(() =>
      history.messages(thread)!.messages.some((m) => m.payload.includes('<status>busy</status>'))
        ? true
        : undefined,
    );
    const second = secondRun(() => history.messages(thread)!.messages, history);
    const out = await second.definition.handler(
      { task: 'Do the five steps.' },
      context(thread, calculate).ctx,
    );
    expect(second.requests).toHaveLength(3);
    expect(answer(out)!.payload).toMatchObject({ text: 'Done: 21 and 4.', status: 'done', turns: 5 });
  });
});
