/**
 * Thread history and audit survive a restart: the same threads, messages and statuses answer from
 * the second daemon, listings and paging included, and the audit hash chain still verifies.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  chainYaml,
  LISTENERS,
  NAPPER_YAML,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
} from '../server/helpers.ts';

const YAML = `organism:\n  name: restart-test\n${AUTH_YAML}listeners:\n${chainYaml()}${NAPPER_YAML}  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [calculate]
`;

describe('a restart', () => {
  it('keeps thread history and audit', async () => {
    const { dir, file } = await organismDir(YAML);
    const first = await startOn(file, TOKENS_ENV);
    const api = (base: string, path: string, options: Parameters<typeof call>[2] = {}) =>
      call(base, path, { token: ADMIN_TOKEN, ...options });
    const threads: string[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await api(first.url, '/api/v1/inject', {
        body: { to: 'greeter', payload: `<greeting><name>r${i}</name></greeting>` },
      });
      threads.push(res.json.thread);
    }
    const tool = (
      await api(first.url, '/api/v1/inject', {
        body: {
          to: 'toolbox',
          payload: '<use-tool><tool>calculate</tool><args>{"expression": "40 + 2"}</args></use-tool>',
        },
      })
    ).json.thread as string;
    const nap = (
      await api(first.url, '/api/v1/inject', { body: { to: 'napper', payload: '<nap><ms>20000</ms></nap>' } })
    ).json.thread as string;
    await until(async () =>
      (await api(first.url, `/api/v1/threads/${nap}`)).json.status === 'active' ? true : undefined,
    );
    expect((await api(first.url, `/api/v1/threads/${nap}/kill`, { method: 'POST' })).status).toBe(200);
    const before = new Map<string, unknown>();
    for (const thread of [...threads, tool]) {
      const view = await until(async () => {
        const v = (await api(first.url, `/api/v1/threads/${thread}`)).json;
        return v.status === 'idle' && v.messages.length >= 3 ? v : undefined;
      });
      before.set(thread, view.messages);
    }
    const stoppedBefore = (await api(first.url, `/api/v1/threads/${nap}`)).json;
    expect(await first.stop('SIGTERM')).toBe(0);

    const segments = await readdir(join(dir, '.organism', 'history'));
    expect(segments.some((name) => /^segment-\d{8}\.jsonl$/.test(name))).toBe(true);

    const second = await startOn(file, TOKENS_ENV);
    try {
      for (const [thread, messages] of before) {
        const view = (await api(second.url, `/api/v1/threads/${thread}`)).json;
        expect(view.messages, thread).toEqual(messages);
        expect(view.status).toBe('idle');
      }
      const toolView = (await api(second.url, `/api/v1/threads/${tool}`)).json;
      expect(toolView.messages.map((m: { kind: string }) => m.kind)).toEqual([
        'message',
        'tool-call',
        'tool-result',
        'response',
      ]);
      const killed = (await api(second.url, `/api/v1/threads/${nap}`)).json;
      expect(killed.status).toBe('stopped');
      expect(killed.messages).toEqual(stoppedBefore.messages);

      const listed = (await api(second.url, '/api/v1/threads?listener=printer&limit=10')).json;
      expect(listed.total).toBe(25);
      expect(
        (await api(second.url, '/api/v1/threads?status=stopped')).json.threads.map(
          (t: { thread: string }) => t.thread,
        ),
      ).toEqual([nap]);
      const info = (await api(second.url, '/api/v1/organism')).json;
      expect(info.threads.in_history).toBe(27);

      // A thread from before the restart can be read, and new work goes on beside it.
      const fresh = await api(second.url, '/api/v1/inject', {
        body: { to: 'greeter', payload: '<greeting><name>after</name></greeting>' },
      });
      expect(fresh.status).toBe(202);
      expect((await api(second.url, '/api/v1/threads?limit=1')).json.threads[0].thread).toBe(
        fresh.json.thread,
      );

      const audit = (await api(second.url, '/api/v1/audit?limit=100')).json.records;
      expect(
        audit.find((r: { type: string; tool?: string }) => r.type === 'call' && r.tool === 'calculate'),
      ).toMatchObject({
        thread: tool,
        outcome: 'ok',
      });
      expect(audit.find((r: { type: string }) => r.type === 'change')).toMatchObject({
        action: 'thread.killed',
        thread: nap,
      });
    } finally {
      await second.stop();
    }
    const verify = await runCli(['audit', '--verify', '--config', file]);
    expect(verify.stdout).toMatch(/hash chain intact/);
    expect(verify.code).toBe(0);
  });
});
