/**
 * What a user sees after `npm start` with no API key: the real daemon with the default
 * organism.yaml runs the `assistant` agent on the scripted provider, which calls the real
 * calculate tool through the dispatcher, tells the printer, and answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';

const NO_KEYS = { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', OLLAMA_URL: '' };

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemonProcess(['--config', 'organism.yaml'], NO_KEYS);
});
afterAll(async () => {
  await daemon?.stop();
});

interface View {
  status: string;
  messages: Array<{ from: string; to: string; kind: string; payload: string }>;
}

describe('the default organism with no API key', () => {
  it('says in its log that the agent runs on the scripted provider', async () => {
    await expect.poll(() => daemon.stdout()).toContain('agents use scripted/assistant-demo');
    const lines = daemon.stdout().split('\n');
    expect(
      lines.some((l) =>
        l.includes('LLM backend 0 (anthropic) skipped as unavailable: ANTHROPIC_API_KEY is not set'),
      ),
    ).toBe(true);
    expect(
      lines.some((l) =>
        l.includes('agents use scripted/assistant-demo (the scripted stand-in, not a real model)'),
      ),
    ).toBe(true);
  });

  it("runs the assistant: its thread shows a calculate call, the printer's line and a final answer", async () => {
    const res = await fetch(`${daemon.url}/api/v1/inject`, {
      method: 'POST',
      headers: daemon.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({
        to: 'assistant',
        payload: '<assistant><task>What is (17 + 25) * 3?</task></assistant>',
      }),
    });
    expect(res.status).toBe(202);
    const { thread } = (await res.json()) as { thread: string };
    let view: View | undefined;
    await expect
      .poll(
        async () => {
          view = (await (
            await fetch(`${daemon.url}/api/v1/threads/${thread}`, { headers: daemon.headers() })
          ).json()) as View;
          return view.messages.some((m) => m.kind === 'response');
        },
        { timeout: 15_000, interval: 100 },
      )
      .toBe(true);
    const flow = view!.messages.map((m) => `${m.from}->${m.to} ${m.kind}`);
    // Each model turn is recorded (so the task can resume after a restart), then what it asked for.
    expect(flow).toEqual([
      'api->assistant message',
      'assistant->assistant model-turn',
      'assistant->calculate tool-call',
      'calculate->assistant tool-result',
      'assistant->assistant model-turn',
      'assistant->assistant model-turn',
      'assistant->printer message',
      'assistant->api response',
    ]);
    expect(view!.messages[1]!.payload).toMatch(
      /^<model-turn><task>[^<]+<\/task><turn>1<\/turn><text>Let me work that out with the calculate tool\.<\/text><calls>\[\{"id":"script_0_0","name":"calculate"/,
    );
    expect(view!.messages[2]!.payload).toBe(
      '<tool-call><tool>calculate</tool><args>{"expression":"(17 + 25) * 3"}</args></tool-call>',
    );
    expect(view!.messages[3]!.payload).toContain('{"result":126');
    expect(view!.messages[5]!.payload).toContain('<turn>3</turn>');
    expect(view!.messages[7]!.payload).toBe(
      '<answer><text>(17 + 25) * 3 = 126 (worked out with the calculate tool).</text><status>done</status>' +
        '<turns>3</turns><backend>scripted/assistant-demo</backend></answer>',
    );
    await expect.poll(() => daemon.stdout()).toContain('"printed":"(17 + 25) * 3 = 126"');
  });
});
