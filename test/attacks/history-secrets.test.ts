/**
 * Invariant 7 for plain messages: a secret the daemon knows that travels in a message between code
 * listeners (sent in by a client, or passed on by a handler) is kept out of the thread history, in
 * every place the history goes: the API's thread view and message list, the stream, the history
 * files on disk. Tool calls and results were redacted already; a listener's own messages were
 * recorded as sent. The delivered message itself is not changed (listeners get what was sent).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Daemon, startDaemon } from '../../src/daemon.ts';
import { until } from '../../src/testing/index.ts';
import { OPERATOR_TOKEN, type TempOrganism, tempOrganism } from '../mcp/helpers.ts';
import { chainYaml } from '../server/helpers.ts';

/** The admin's token (named by token_env): a secret the daemon knows. */
const KNOWN_SECRET = 'sk-leak-Hq7Nc2Wv9Rt4Lm6P';
let organism: TempOrganism;
let daemon: Daemon;

beforeAll(async () => {
  organism = await tempOrganism(`auth:
  tokens:
    - { name: ops, role: operator, token_env: LEAK_OPS_TOKEN }
    - { name: root, role: admin, token_env: LEAK_ADMIN_TOKEN }
listeners:
${chainYaml()}`);
  daemon = await startDaemon({
    configPath: organism.config,
    port: 0,
    host: '127.0.0.1',
    reloadOnSighup: false,
    env: { ...process.env, LEAK_OPS_TOKEN: OPERATOR_TOKEN, LEAK_ADMIN_TOKEN: KNOWN_SECRET },
  });
});
afterAll(async () => {
  await daemon?.close(100);
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${daemon.url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${OPERATOR_TOKEN}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  });

/** Whether `text` holds the secret or a recognisable piece of it, in any case. */
const leaks = (text: string) => /Hq7Nc2Wv9Rt4Lm6P|sk-leak-Hq7N/i.test(text);

describe('a known secret in a message between code listeners', () => {
  it('is redacted in the thread history, the message list, the stream and the history on disk', async () => {
    const stream = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/stream`, ['organism.v1'], {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    const events: string[] = [];
    stream.on('message', (data) => events.push(String(data)));
    await new Promise((resolve, reject) => {
      stream.once('message', resolve);
      stream.once('error', reject);
    });

    // greeter -> shouter (which shouts it: the upper-case form) -> printer.
    const injected = await api('/api/v1/inject', {
      method: 'POST',
      body: JSON.stringify({ to: 'greeter', payload: `<greeting><name>${KNOWN_SECRET}</name></greeting>` }),
    });
    expect(injected.status).toBe(202);
    const { thread } = (await injected.json()) as { thread: string };
    const view = await until(async () => {
      const res = await api(`/api/v1/threads/${thread}`);
      const text = await res.text();
      return (text.match(/"from":"shouter"/g) ?? []).length > 0 ? text : undefined;
    });
    stream.close();

    // The messages are there, each with the secret replaced.
    expect(view).toContain('[REDACTED]');
    expect(view).toMatch(/"from":"greeter"/);
    expect(leaks(view)).toBe(false);
    const listed = await (await api(`/api/v1/messages?thread=${thread}`)).text();
    expect(leaks(listed)).toBe(false);
    expect(events.some((e) => e.includes(thread))).toBe(true);
    expect(events.filter(leaks)).toEqual([]);

    await daemon.close(100);
    const dir = join(organism.dataDir, 'history');
    const files = await readdir(dir, { recursive: true });
    let onDisk = '';
    for (const file of files) onDisk += await readFile(join(dir, String(file)), 'utf8').catch(() => '');
    expect(onDisk).toContain(thread);
    expect(leaks(onDisk)).toBe(false);
  });
});
