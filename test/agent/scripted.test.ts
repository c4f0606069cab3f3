/** The scripted provider: deterministic turns, templates, and the shipped default script. */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createScriptedProvider, type Script } from '../../src/agent/providers/scripted.ts';
import type { ChatMessage, CompletionRequest } from '../../src/agent/types.ts';
import { modelContract } from './providers.contract.ts';

const signal = new AbortController().signal;
const request = (messages: ChatMessage[]): CompletionRequest => ({
  system: 'sys',
  messages,
  functions: [],
  maxTokens: 100,
});
const task = (text: string): ChatMessage => ({
  role: 'user',
  content: `<task from="api">\n${text}\n</task>`,
});

const SCRIPT: Script = {
  name: 'demo',
  scripts: [
    {
      when: 'add (?<a>\\d+) and (?<b>\\d+)',
      turns: [
        {
          text: 'Adding.',
          tool_calls: [{ name: 'calculate', args: { expression: '{{match.a}} + {{match.b}}' } }],
        },
        { text: '{{task}} = {{result.result}}', on_error: { text: 'failed: {{result.error.code}}' } },
      ],
    },
    { turns: [{ text: 'no arithmetic in: {{task}}' }] },
  ],
};

describe('the scripted provider', () => {
  const provider = createScriptedProvider({ script: SCRIPT });

  it('plays the first matching script, filling placeholders from the task', async () => {
    expect(provider.label).toBe('scripted/demo');
    const turn = await provider.complete(request([task('Please add 2 and 40')]), signal);
    expect(turn.text).toBe('Adding.');
    expect(turn.toolCalls).toEqual([{ id: 'script_0_0', name: 'calculate', args: { expression: '2 + 40' } }]);
    expect(turn.stopReason).toBe('tool_use');
    expect(turn.usage.input).toBeGreaterThan(0);
  });

  it('picks the turn from the conversation and reads the last result', async () => {
    const calls = [{ id: 'script_0_0', name: 'calculate', args: { expression: '2 + 40' } }];
    const ok = await provider.complete(
      request([
        task('add 2 and 40'),
        { role: 'assistant', text: 'Adding.', toolCalls: calls },
        {
          role: 'tool',
          results: [
            { callId: 'script_0_0', name: 'calculate', content: '...', isError: false, data: { result: 42 } },
          ],
        },
      ]),
      signal,
    );
    expect(ok).toMatchObject({ text: 'add 2 and 40 = 42', toolCalls: [], stopReason: 'end_turn' });
    const failed = await provider.complete(
      request([
        task('add 2 and 40'),
        { role: 'assistant', text: 'Adding.', toolCalls: calls },
        {
          role: 'tool',
          results: [
            {
              callId: 'script_0_0',
              name: 'calculate',
              content: '...',
              isError: true,
              data: { status: 'refused', error: { code: 'PermissionDenied' } },
            },
          ],
        },
      ]),
      signal,
    );
    expect(failed.text).toBe('failed: PermissionDenied');
  });

  it('falls through to a script without `when`, and says when the script has run out', async () => {
    expect((await provider.complete(request([task('hello')]), signal)).text).toBe('no arithmetic in: hello');
    const done = await provider.complete(
      request([task('hello'), { role: 'assistant', text: 'x', toolCalls: [] }]),
      signal,
    );
    expect(done.text).toBe('(the script has no more turns)');
    const none = createScriptedProvider({ script: { scripts: [{ when: 'never', turns: [{ text: 'x' }] }] } });
    expect((await none.complete(request([task('hello')]), signal)).text).toBe(
      'The scripted provider has no script for this task.',
    );
  });

  it('plays the shipped default script: calculate, tell the printer, answer', async () => {
    const file = fileURLToPath(new URL('../../listeners/assistant.script.yaml', import.meta.url));
    const shipped = createScriptedProvider({ script: file });
    expect(shipped.label).toBe('scripted/assistant-demo');
    const first = await shipped.complete(request([task('What is (17 + 25) * 3?')]), signal);
    expect(first.toolCalls).toEqual([
      { id: 'script_0_0', name: 'calculate', args: { expression: '(17 + 25) * 3' } },
    ]);
    const other = await shipped.complete(request([task('Tell me a joke')]), signal);
    expect(other.toolCalls).toEqual([]);
    expect(other.text).toContain('no API key is set');
  });

  it('takes delay_ms to give a turn, and stops waiting when the request is aborted', async () => {
    const slow = createScriptedProvider({
      script: { scripts: [{ turns: [{ text: 'slow', delay_ms: 150 }] }] },
    });
    const started = Date.now();
    expect((await slow.complete(request([task('x')]), signal)).text).toBe('slow');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const controller = new AbortController();
    const pending = slow.complete(request([task('x')]), controller.signal);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'llm.aborted' });
    expect(() =>
      createScriptedProvider({ script: { scripts: [{ turns: [{ text: 'x', delay_ms: -1 }] }] } }),
    ).toThrow('scripts[0].turns[0].delay_ms: expected a number of milliseconds, 0 or more');
  });
});

modelContract('scripted', {
  kind: 'scripted',
  answering: async (text, usage) =>
    createScriptedProvider({ script: { name: 'contract', scripts: [{ turns: [{ text, usage }] }] } }),
  calling: async (calls) =>
    createScriptedProvider({
      script: {
        name: 'contract',
        scripts: [{ turns: [{ tool_calls: calls.map(({ name, args }) => ({ name, args })) }] }],
      },
    }),
});
