/**
 * A model per agent, with the real daemon: `listeners[].llm` over the organism-wide `llm:`. Two
 * agents play their own scripts under their own model names; two more ask a local server speaking
 * the OpenAI wire, one with its own model and sampling settings, one with the organism-wide ones;
 * a reload replaces only the agents whose effective settings changed (an edited script too); the
 * key of the backend an agent asks reaches neither its answer, the thread, the log nor the audit
 * log.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';
import { type FakeLlm, startFakeLlm } from './helpers.ts';

// Looks like no key to the pattern redaction: only its being a known secret can mask it.
const KEY = 'plum-horizon-quartz-4471';

let dir: string;
let file: string;
let server: FakeLlm;
let daemon: DaemonProcess;

const script = (name: string, text: string) =>
  `name: ${name}\nscripts:\n  - turns:\n      - text: "${text}"\n`;

const organism = (baseModel: string) => `organism:
  name: model-per-agent
  data_dir: ${JSON.stringify(join(dir, 'data'))}
  log_level: info
llm:
  retries: 0
  temperature: 0.7
  backends:
    - name: scripts
      provider: scripted
      script: ./default.script.yaml
    - name: local
      provider: openai-compatible
      base_url: ${server.url}/v1
      api_key_env: AGENT_BACKEND_KEY
      model: ${baseModel}
listeners:
  - name: plain
    agent: true
    description: Answers from the organism-wide script.
  - name: triage
    agent: true
    description: Sorts a request by urgency.
    llm:
      backend: scripts
      model: triage-model
      script: ./triage.script.yaml
  - name: writer
    agent: true
    description: Drafts a reply.
    llm:
      backend: scripts
      model: writer-model
      script: ./writer.script.yaml
  - name: remote
    agent: true
    description: Asks the local model with settings of its own.
    llm:
      backend: local
      model: remote-model
      temperature: 0.2
      top_p: 0.9
      max_tokens: 321
  - name: remote-default
    agent: true
    description: Asks the local model with the organism-wide settings.
    llm:
      backend: local
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'organism-model-per-agent-'));
  // The model repeats the key it was sent: the runtime must not let it through.
  server = await startFakeLlm((request) => ({
    json: {
      choices: [
        {
          message: {
            role: 'assistant',
            content: `I am ${request.body.model}; your key is ${String(request.headers.authorization).slice(7)}`,
          },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 8 },
    },
  }));
  writeFileSync(join(dir, 'default.script.yaml'), script('default-demo', 'Default script: {{task}}'));
  writeFileSync(join(dir, 'triage.script.yaml'), script('unused-name', 'Triage says {{task}} is urgent.'));
  writeFileSync(
    join(dir, 'writer.script.yaml'),
    script('unused-name', 'Writer drafted a reply to {{task}}.'),
  );
  file = join(dir, 'organism.yaml');
  writeFileSync(file, organism('base-model'));
  daemon = await startDaemonProcess(['--config', file], { AGENT_BACKEND_KEY: KEY });
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
});

interface Message {
  from: string;
  to: string;
  kind: string;
  payload: string;
}

/** Sends `task` to `agent` through the API and returns its thread once the agent has answered. */
async function ask(agent: string, task: string): Promise<{ answer: string; messages: Message[] }> {
  const res = await fetch(`${daemon.url}/api/v1/inject`, {
    method: 'POST',
    headers: daemon.headers({ 'content-type': 'application/json' }),
    body: JSON.stringify({ to: agent, payload: `<${agent}><task>${task}</task></${agent}>` }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  const { thread } = (await res.json()) as { thread: string };
  let messages: Message[] = [];
  await expect
    .poll(
      async () => {
        const view = await fetch(`${daemon.url}/api/v1/threads/${thread}`, { headers: daemon.headers() });
        messages = ((await view.json()) as { messages: Message[] }).messages;
        return messages.some((m) => m.kind === 'response');
      },
      { timeout: 15_000, interval: 100 },
    )
    .toBe(true);
  return { answer: messages.find((m) => m.kind === 'response')!.payload, messages };
}

describe('a model per agent (listeners[].llm)', () => {
  it('each scripted agent answers from its own script under its own model name', async () => {
    const [triage, writer, plain] = await Promise.all([
      ask('triage', 'a broken login'),
      ask('writer', 'a refund request'),
      ask('plain', 'hello'),
    ]);
    expect(triage.answer).toBe(
      '<answer><text>Triage says a broken login is urgent.</text><status>done</status><turns>1</turns>' +
        '<backend>scripted/triage-model</backend></answer>',
    );
    expect(writer.answer).toBe(
      '<answer><text>Writer drafted a reply to a refund request.</text><status>done</status><turns>1</turns>' +
        '<backend>scripted/writer-model</backend></answer>',
    );
    // No llm: of its own: the organism-wide scripted backend and its script.
    expect(plain.answer).toBe(
      '<answer><text>Default script: hello</text><status>done</status><turns>1</turns>' +
        '<backend>scripted/default-demo</backend></answer>',
    );
    expect(daemon.stdout()).toContain('agent triage uses scripted/triage-model');
    expect(daemon.stdout()).toContain('agent writer uses scripted/writer-model');
  });

  it("sends an agent's own model and sampling settings over the wire, the organism-wide ones to the other", async () => {
    const before = server.requests.length;
    const remote = await ask('remote', 'status?');
    const remoteDefault = await ask('remote-default', 'status?');
    const [own, wide] = server.requests.slice(before);
    expect(own!.path).toBe('/v1/chat/completions');
    expect(own!.body).toMatchObject({ model: 'remote-model', temperature: 0.2, top_p: 0.9, max_tokens: 321 });
    expect(wide!.body).toMatchObject({ model: 'base-model', temperature: 0.7 });
    // Unset organism-wide: not sent, so the provider's own default holds.
    expect(wide!.body).not.toHaveProperty('top_p');
    expect(wide!.body).not.toHaveProperty('max_tokens');
    expect(own!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(remote.answer).toContain('<backend>openai-compatible/remote-model</backend>');
    expect(remoteDefault.answer).toContain('<backend>openai-compatible/base-model</backend>');

    // The model echoed the agent's backend key: it is masked in the answer, and nowhere in the
    // thread, the daemon's log or the audit log.
    expect(remote.answer).toContain('I am remote-model; your key is [REDACTED]');
    for (const m of [...remote.messages, ...remoteDefault.messages]) expect(m.payload).not.toContain(KEY);
    expect(daemon.stdout() + daemon.stderr()).not.toContain(KEY);
    expect(await readFile(join(dir, 'data', 'audit.jsonl'), 'utf8')).not.toContain(KEY);
  });

  it('a reload replaces only the agents whose effective model settings changed', async () => {
    // The local backend's own model: remote-default asks it, plain fails over to it; remote names
    // a model of its own, triage and writer ask only the scripted backend.
    await writeFile(file, organism('base-model-2'));
    const res = await fetch(`${daemon.url}/api/v1/organism/reload`, {
      method: 'POST',
      headers: daemon.headers(),
    });
    const report = (await res.json()) as { replaced: string[]; unchanged: string[] };
    expect(res.status, JSON.stringify(report)).toBe(200);
    expect(report.replaced).toEqual(['plain', 'remote-default']);
    expect(report.unchanged.sort()).toEqual(['remote', 'triage', 'writer']);
    const before = server.requests.length;
    await ask('remote-default', 'again?');
    expect(server.requests[before]!.body.model).toBe('base-model-2');
  });

  it("a reload after an agent's script was edited replaces that agent, which plays the new script", async () => {
    await writeFile(
      join(dir, 'triage.script.yaml'),
      script('unused-name', 'Triage now says {{task}} can wait.'),
    );
    const res = await fetch(`${daemon.url}/api/v1/organism/reload`, {
      method: 'POST',
      headers: daemon.headers(),
    });
    const report = (await res.json()) as { replaced: string[]; unchanged: string[] };
    expect(res.status, JSON.stringify(report)).toBe(200);
    expect(report.replaced).toEqual(['triage']);
    expect((await ask('triage', 'a typo')).answer).toContain('<text>Triage now says a typo can wait.</text>');
  });
});
