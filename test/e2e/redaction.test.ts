/**
 * Issue 14, item 6, with the real daemon (`organism run`): its LLM backend is a local server in
 * OpenAI's wire format that echoes the daemon's API key back in other forms (a prefix, base64,
 * base64url, upper case, without `sk-`), in 401/400 error bodies and in a 200 reply. None of those
 * forms shows in the agent's answer, the thread, any API response or the daemon's log; and a tool
 * call's arguments are in the thread exactly as in the audit log. A secret that a reloaded
 * organism.yaml names is redacted from then on.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../agent/helpers.ts';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { keyVariants, leaks } from '../helpers/secrets.ts';
import { call, organismDir, startOn, until } from '../server/helpers.ts';

const KEY = 'sk-Hx4Rt8Wm2Qz6Vn1Kc9Lb3Gf7Dj5Sa0Py-E2Iu8o';
const VARIANTS = keyVariants(KEY);
const TOOL_ARGS = {
  expression: '2 + 2',
  api_key: 'zz-Unregistered-Key-778899',
  note: 'postgres://admin:Hunter2-pass@db.example.com/x',
};

/** Named by organism.yaml only after a reload. */
const SMTP_PASSWORD = 'Mq7-smtp-Wz4Rk9Tb2Xn6';

let file: string;
let llm: FakeLlm;
let daemon: DaemonProcess;
/** Every API body read, searched for the key at the end. */
const seen: string[] = [];

const text = (content: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 20, completion_tokens: 40, total_tokens: 60 },
});

beforeAll(async () => {
  // What the model answers depends on the task: `401 <variant>`, `400 <variant>`, `repeat`, `tool`.
  llm = await startFakeLlm((request) => {
    const messages = request.body.messages as Array<{ role: string; content: string | null }>;
    if (messages.some((m) => m.role === 'tool')) return { json: text('Done.') };
    const task = /<task[^>]*>\s*([\s\S]*?)\s*<\/task>/.exec(messages.at(-1)!.content ?? '')?.[1] ?? '';
    const [what, name] = [task.split(' ')[0]!, task.slice(task.indexOf(' ') + 1)];
    if (what === '401' || what === '400') {
      const echoed = VARIANTS[name]!;
      return {
        status: Number(what),
        json: {
          error: {
            message:
              what === '401'
                ? `Incorrect API key provided: ${echoed}. You can find your API key at https://platform.openai.com/account/api-keys.`
                : `Invalid request for key ${echoed}.`,
            type: 'invalid_request_error',
            param: null,
            code: what === '401' ? 'invalid_api_key' : null,
          },
        },
      };
    }
    if (what === 'tool') {
      return {
        json: {
          id: 'chatcmpl-2',
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [
                  {
                    id: 'call_1',
                    type: 'function',
                    function: { name: 'calculate', arguments: JSON.stringify(TOOL_ARGS) },
                  },
                ],
              },
              finish_reason: 'tool_calls',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        },
      };
    }
    if (what === 'smtp') return { json: text(`The mail password is ${SMTP_PASSWORD.toUpperCase()}.`) };
    return { json: text(`Here it is: ${Object.values(VARIANTS).join(' / ')}. Keep it safe.`) };
  });
  ({ file } = await organismDir(`organism:
  name: redaction-test
  log_level: debug
listeners:
  - name: helper
    agent: true
    description: Answers questions.
    tools: [calculate]
    max_turns: 4
llm:
  retries: 0
  backends:
    - provider: openai
      api_key_env: REDACTION_TEST_KEY
      base_url: ${llm.url}/v1
      model: gpt-test
`));
  daemon = await startOn(file, { REDACTION_TEST_KEY: KEY, REDACTION_SMTP_PASSWORD: SMTP_PASSWORD });
});
afterAll(async () => {
  await daemon?.stop();
  await llm?.close();
});

async function api(path: string, body?: unknown) {
  const result = await call(daemon.url, path, body === undefined ? {} : { body });
  seen.push(result.text);
  return result;
}

/** Sends `task` to the agent and returns its thread once the agent has answered. */
async function ask(task: string) {
  const res = await api('/api/v1/inject', { to: 'helper', payload: `<helper><task>${task}</task></helper>` });
  expect(res.status, res.text).toBe(202);
  const thread = res.json.thread as string;
  return until(async () => {
    const view = (await api(`/api/v1/threads/${thread}`)).json;
    const messages = view?.messages as Array<{ from: string; kind: string; payload: string }> | undefined;
    return messages?.some((m) => m.from === 'helper' && m.kind === 'response') && view.status === 'idle'
      ? messages
      : undefined;
  });
}

const answer = (messages: Array<{ from: string; kind: string; payload: string }>) =>
  messages.find((m) => m.from === 'helper' && m.kind === 'response')!.payload;

describe('the daemon, with a backend that echoes its key', () => {
  it('keeps every form of the key out of the answer to a 401 or 400', async () => {
    for (const status of ['401', '400']) {
      for (const name of Object.keys(VARIANTS)) {
        const reply = answer(await ask(`${status} ${name}`));
        expect(reply, name).toContain(`request refused (HTTP ${status})`);
        expect(leaks(reply, KEY), `${status} ${name}: ${reply}`).toEqual([]);
      }
    }
  });

  it('keeps every form of the key out of the answer when the model repeats it', async () => {
    const reply = answer(await ask('repeat'));
    expect(reply).toContain('Here it is: [REDACTED]');
    expect(reply).toContain('Keep it safe.');
    expect(leaks(reply, KEY)).toEqual([]);
  });

  it("records a tool call's arguments in the thread exactly as in the audit log", async () => {
    const messages = await ask('tool');
    const callMessage = messages.find((m) => m.kind === 'tool-call')!;
    const args = JSON.parse(
      /<args>([\s\S]*)<\/args>/
        .exec(callMessage.payload)![1]!
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&'),
    );
    const records = (await api('/api/v1/audit?tool=calculate&limit=10')).json.records as Array<{
      input: unknown;
    }>;
    expect(records.length).toBe(1);
    expect(args).toEqual(records[0]!.input);
    expect(args).toEqual({
      expression: '2 + 2',
      api_key: '[REDACTED]',
      note: 'postgres://[REDACTED]@db.example.com/x',
    });
  });

  it('knows the secrets a reloaded organism.yaml names from the moment the reload applies', async () => {
    expect(answer(await ask('smtp'))).toContain(SMTP_PASSWORD.toUpperCase());
    const yaml = await readFile(file, 'utf8');
    await writeFile(
      file,
      `${yaml}smtp:\n  host: 127.0.0.1\n  port: 2599\n  secure: false\n  user: mailer\n  password_env: REDACTION_SMTP_PASSWORD\n  from: organism@example.com\n`,
    );
    const reloaded = await api('/api/v1/organism/reload', {});
    expect(reloaded.status, reloaded.text).toBe(200);
    const reply = answer(await ask('smtp'));
    expect(reply).toContain('The mail password is [REDACTED].');
    expect(reply.toLowerCase()).not.toContain(SMTP_PASSWORD.slice(0, 8).toLowerCase());
  });

  it('shows no form of the key in any API response or log line', async () => {
    for (const path of [
      '/api/v1/threads',
      '/api/v1/messages?limit=1000',
      '/api/v1/audit?limit=1000',
      '/api/v1/organism',
      '/api/v1/organism/config',
    ]) {
      expect((await api(path)).status, path).toBe(200);
    }
    const everything = seen.join('\n');
    expect(everything).toContain('request refused (HTTP 401)');
    expect(leaks(everything, KEY)).toEqual([]);
    expect(leaks(everything, TOOL_ARGS.api_key)).toEqual([]);
    const log = daemon.stdout();
    expect(log).toContain('request refused (HTTP 400)');
    expect(leaks(log, KEY)).toEqual([]);
  });
});
