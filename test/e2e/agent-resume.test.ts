/**
 * Agents resume (issue 15, item 3), with the real daemon: an agent on the scripted provider with a
 * five-turn script that calls tools (calculate, and a webhook to a receiver this test runs) is
 * killed with `kill -9` while its third model call is in flight. After a restart the journal
 * delivers its task again, and it plays turns 3 to 5 only and answers: turns 1 and 2 are neither
 * asked of the model again nor their calls made again, and its token count goes on from theirs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { call, organismDir, startOn, until } from '../server/helpers.ts';

const running: DaemonProcess[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const daemon of running.splice(0)) await daemon.stop('SIGKILL');
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const SUPPORT = fileURLToPath(new URL('./agent-resume-support/', import.meta.url));

async function start(file: string, env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
  const daemon = await startOn(file, env);
  running.push(daemon);
  return daemon;
}

interface View {
  id: string;
  from: string;
  to: string;
  kind: string;
  payload: string;
}

const field = (payload: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(payload)?.[1];

/** An organism.yaml whose scripted backend plays `script` (written beside it); its path. */
async function organismWith(yaml: string, script: string): Promise<string> {
  const { dir, file } = await organismDir(yaml);
  const path = join(dir, 'agent.script.yaml');
  await writeFile(path, script);
  await writeFile(file, (await readFile(file, 'utf8')).replace('SCRIPT', path));
  return file;
}

/** The thread's messages as the daemon at `url` shows them (undefined while it does not know it). */
async function messagesOf(url: string, thread: string): Promise<View[] | undefined> {
  return (await call(url, `/api/v1/threads/${thread}`)).json.messages as View[] | undefined;
}

describe('an agent in the middle of a task, killed with kill -9', () => {
  it('plays turns 3 to 5 only after a restart, and answers', async () => {
    const hooks: Array<{ turn: number; value: number }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        hooks.push(JSON.parse(body) as { turn: number; value: number });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    servers.push(receiver);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const usage = 'usage: { input: 90, output: 10 }';
    // Turn 3 takes 4 s to come back from the "model": the kill lands while it is in flight.
    const file = await organismWith(
      `organism:
  name: agent-resume
listeners:
  - name: worker
    agent: true
    description: Does five steps with tools.
    tools: [calculate, webhook]
    tool_config:
      webhook:
        allow_loopback: true
    max_turns: 8
    budget: { tokens: 10000 }
llm:
  backends:
    - provider: scripted
      script: SCRIPT
`,
      `name: five
scripts:
  - turns:
      - text: Turn 1.
        tool_calls: [{ name: calculate, args: { expression: '6 * 7' } }]
        ${usage}
      - text: Turn 2.
        tool_calls: [{ name: webhook, args: { url: '${hook}', payload: { turn: 2, value: '{{result.result}}' } } }]
        ${usage}
      - text: Turn 3.
        delay_ms: 4000
        tool_calls: [{ name: calculate, args: { expression: '{{all_results.0.result}} + 1' } }]
        ${usage}
      - text: Turn 4.
        tool_calls: [{ name: webhook, args: { url: '${hook}', payload: { turn: 4, value: '{{result.result}}' } } }]
        ${usage}
      - text: 'Answer: {{all_results.2.result}}.'
        ${usage}
`,
    );
    const first = await start(file);
    const injected = await call(first.url, '/api/v1/inject', {
      body: { to: 'worker', payload: '<worker><task>Do the five steps.</task></worker>' },
    });
    expect(injected.status).toBe(202);
    const thread = injected.json.thread as string;
    const thread1 = async () => (await messagesOf(first.url, thread)) ?? [];
    // Turn 2 is recorded and its webhook answered: the third model call is under way.
    await until(async () => {
      const messages = await thread1();
      return messages.some((m) => m.from === 'webhook' && m.kind === 'tool-result') ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await thread1();
    expect(before.filter((m) => m.kind === 'model-turn').map((m) => field(m.payload, 'turn'))).toEqual([
      '1',
      '2',
    ]);
    expect(before.some((m) => m.kind === 'response')).toBe(false);
    await first.stop('SIGKILL');
    running.splice(running.indexOf(first), 1);

    const second = await start(file);
    const after = await until(async () => {
      const messages = await messagesOf(second.url, thread);
      return messages?.some((m) => m.kind === 'response') ? messages : undefined;
    }, 30_000);
    expect(second.stdout()).toContain('journal: unfinished messages queued again');
    expect(second.stdout()).toContain('agent worker resumes its task after turn 2, from the thread history');

    // Each turn was played once: 1 and 2 before the kill, 3 to 5 after it (turn 3's first
    // attempt was in flight, so never recorded), and nothing before the kill was replayed.
    const turns = after.filter((m) => m.kind === 'model-turn');
    expect(turns.map((m) => field(m.payload, 'turn'))).toEqual(['1', '2', '3', '4', '5']);
    expect(turns.slice(0, 2).map((m) => m.id)).toEqual(
      before.filter((m) => m.kind === 'model-turn').map((m) => m.id),
    );
    expect(turns.map((m) => field(m.payload, 'text'))).toEqual([
      'Turn 1.',
      'Turn 2.',
      'Turn 3.',
      'Turn 4.',
      'Answer: 43.',
    ]);
    // The budget's count went on from turns 1-2: 100 tokens a turn, 500 in all.
    expect(turns.map((m) => field(m.payload, 'thread_tokens'))).toEqual(['100', '200', '300', '400', '500']);
    // The tool calls: one per turn that asked for one, none made twice.
    expect(after.filter((m) => m.kind === 'tool-call').map((m) => m.to)).toEqual([
      'calculate',
      'webhook',
      'calculate',
      'webhook',
    ]);
    expect(hooks).toEqual([
      { turn: 2, value: 42 },
      { turn: 4, value: 43 },
    ]);
    const answer = after.find((m) => m.kind === 'response')!;
    expect(answer.from).toBe('worker');
    expect(answer.payload).toBe(
      '<answer><text>Answer: 43.</text><status>done</status><turns>5</turns><backend>scripted/five</backend></answer>',
    );
  }, 90_000);

  it('waiting for a peer: the peer runs again after the restart and its reply resumes the task', async () => {
    const file = await organismWith(
      `organism:
  name: agent-resume-peer
listeners:
  - name: oracle
    handler: ${SUPPORT}oracle.ts
  - name: asker
    agent: true
    description: Consults the oracle, then calculates.
    tools: [calculate]
    peers: [oracle]
llm:
  backends:
    - provider: scripted
      script: SCRIPT
`,
      `name: peer
scripts:
  - turns:
      - text: Asking.
        tool_calls: [{ name: ask_oracle, args: { question: 'five?' } }]
      - tool_calls: [{ name: calculate, args: { expression: '2 + 3' } }]
      - text: 'The oracle said {{all_results.0.text}}; 2 + 3 = {{result.result}}.'
`,
    );
    // The oracle takes a minute in the first daemon: the kill finds the asker waiting for it.
    const first = await start(file, { ORACLE_MS: '60000' });
    const injected = await call(first.url, '/api/v1/inject', {
      body: { to: 'asker', payload: '<asker><task>Consult the oracle.</task></asker>' },
    });
    expect(injected.status).toBe(202);
    const thread = injected.json.thread as string;
    await until(async () => {
      const messages = (await messagesOf(first.url, thread)) ?? [];
      return messages.some((m) => m.to === 'oracle' && m.kind === 'message') ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await first.stop('SIGKILL');
    running.splice(running.indexOf(first), 1);

    const second = await start(file, { ORACLE_MS: '0' });
    const after = await until(async () => {
      const messages = await messagesOf(second.url, thread);
      return messages?.some((m) => m.from === 'asker' && m.kind === 'response') ? messages : undefined;
    }, 30_000);
    expect(after.map((m) => `${m.from}->${m.to} ${m.kind}`)).toEqual([
      'api->asker message',
      'asker->asker model-turn',
      'asker->oracle message',
      'oracle->asker response',
      'asker->asker model-turn',
      'asker->calculate tool-call',
      'calculate->asker tool-result',
      'asker->asker model-turn',
      'asker->api response',
    ]);
    expect(after.filter((m) => m.kind === 'model-turn').map((m) => field(m.payload, 'turn'))).toEqual([
      '1',
      '2',
      '3',
    ]);
    expect(after.at(-1)!.payload).toBe(
      '<answer><text>The oracle said yes to five?; 2 + 3 = 5.</text><status>done</status><turns>3</turns><backend>scripted/peer</backend></answer>',
    );
    expect(second.stdout()).toContain('agent asker resumes its task after turn 1, from the thread history');
  }, 90_000);
});
