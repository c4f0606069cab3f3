/**
 * A pending approval and restarts (issue 19), with the real daemon: it survives kill -9 and a
 * graceful stop and the call runs once when approved afterwards; an approved call cut off after it
 * ran is not run again; an agent waiting for approval waits on the same approval after a restart.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { call, organismDir, startOn, until } from '../server/helpers.ts';
import { answer, inject, messages, organismYaml, pending, ranLines } from './helpers.ts';

describe('a pending approval survives kill -9', () => {
  const running: DaemonProcess[] = [];
  afterEach(async () => {
    for (const daemon of running.splice(0)) await daemon.stop('SIGKILL');
  });

  it('is still listed after the restart, and runs once when approved', async () => {
    const made = await organismDir('');
    const { dir, file } = made;
    await (await import('node:fs/promises')).writeFile(file, organismYaml(dir, false));
    const first = await startOn(file);
    running.push(first);
    const thread = await inject(first.url, 'use-tool', 'echo survived >> ran.txt');
    const approval = await pending(first.url, thread);
    await first.stop('SIGKILL');
    running.splice(0);

    const second = await startOn(file);
    running.push(second);
    const again = await pending(second.url, thread);
    expect(again.id).toBe(approval.id);
    expect(again.requested).toBe(approval.requested);
    expect(await ranLines(dir)).toEqual([]);
    const approved = await call(second.url, `/api/v1/approvals/${approval.id}/approve`, {
      body: { reason: 'after the restart' },
    });
    expect(approved.status).toBe(200);
    expect(approved.json.decided_by).toBe('local');
    expect((await answer(second.url, thread)).status).toBe('ok');
    expect(await ranLines(dir)).toEqual(['survived']);
  }, 120_000);
});

describe('an approved call cut off by kill -9 after it ran', () => {
  it('is not run again when its handler runs again after the restart: the approval stands, the once log answers', async () => {
    const { dir, file } = await organismDir('');
    const { writeFile } = await import('node:fs/promises');
    const runner = fileURLToPath(new URL('./support/slow-runner.ts', import.meta.url));
    await writeFile(
      file,
      `organism:
  name: approval-once
  workspace: ${dir}/ws
listeners:
  - name: runner
    handler: ${runner}
    trust: high
    timeout_ms: 900000
    tools: [run_command]
    tool_config:
      run_command: { shell: true, approval: always }
`,
    );
    const record = join(dir, 'record.txt');
    await writeFile(record, '');
    const lines = async () => (await readFile(record, 'utf8')).split('\n').filter(Boolean);
    const first = await startOn(file, { APPROVAL_RECORD: record, APPROVAL_SLEEP_MS: '60000' });
    let second: DaemonProcess | undefined;
    try {
      const injected = await call(first.url, '/api/v1/inject', {
        body: { payload: '<slow-run><command>echo once &gt;&gt; ran.txt</command></slow-run>' },
      });
      const thread = injected.json.thread as string;
      const approval = await pending(first.url, thread);
      expect((await call(first.url, `/api/v1/approvals/${approval.id}/approve`, { body: {} })).status).toBe(
        200,
      );
      // The call is answered (its effect recorded as done); the handler sleeps: the crash cuts it
      // off before it is handled, so the journal gives its message again after the restart.
      await until(async () =>
        (await messages(first.url, thread)).some((m) => m.kind === 'tool-result') ? true : undefined,
      );
      await first.stop('SIGKILL');
      second = await startOn(file, { APPROVAL_RECORD: record, APPROVAL_SLEEP_MS: '0' });
      await until(async () => ((await lines()).some((l) => l.startsWith('done')) ? true : undefined), 30_000);
      expect(await lines()).toEqual(['start', 'start', 'done ok']);
      expect(await ranLines(dir)).toEqual(['once']);
      expect((await call(second.url, '/api/v1/approvals')).json.approvals).toEqual([]);
    } finally {
      await first.stop('SIGKILL');
      await second?.stop('SIGKILL');
    }
  }, 120_000);
});

describe('a pending approval across a graceful stop (SIGTERM)', () => {
  it('stays pending (the drain gives up on the waiting handler), and runs once when approved after the restart', async () => {
    const { dir, file } = await organismDir('');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(file, `${organismYaml(dir, false)}bus:\n  drain_timeout_ms: 500\n`);
    const first = await startOn(file);
    const thread = await inject(first.url, 'use-tool', 'echo graceful >> ran.txt');
    const approval = await pending(first.url, thread);
    expect(await first.stop('SIGTERM')).toBe(0);
    const second = await startOn(file);
    try {
      expect((await pending(second.url, thread)).id).toBe(approval.id);
      const approved = await call(second.url, `/api/v1/approvals/${approval.id}/approve`, { body: {} });
      expect(approved.status).toBe(200);
      expect((await answer(second.url, thread)).status).toBe('ok');
      expect(await ranLines(dir)).toEqual(['graceful']);
    } finally {
      await second.stop('SIGKILL');
    }
  }, 120_000);
});

describe('an agent whose call waits for approval', () => {
  const running: DaemonProcess[] = [];
  afterEach(async () => {
    for (const daemon of running.splice(0)) await daemon.stop('SIGKILL');
  });
  const start = async (file: string) => {
    const daemon = await startOn(file);
    running.push(daemon);
    return daemon;
  };

  async function agentOrganism(): Promise<{ dir: string; file: string }> {
    const { dir, file } = await organismDir('');
    const script = join(dir, 'agent.script.yaml');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      script,
      `name: approval
scripts:
  - turns:
      - text: Running it.
        tool_calls: [{ name: run_command, args: { command: 'echo agent >> ran.txt' } }]
      - text: 'Ran it: {{result.exit_code}}.'
        on_error: { text: 'Could not: {{result.error.code}}: {{result.error.message}}' }
`,
    );
    await writeFile(
      file,
      `organism:
  name: approval-agent
  workspace: ${dir}/ws
listeners:
  - name: worker
    agent: true
    description: Runs a command.
    trust: high
    timeout_ms: 900000
    tools: [run_command]
    tool_config:
      run_command: { shell: true, approval: always }
llm:
  backends:
    - provider: scripted
      script: ${script}
`,
    );
    return { dir, file };
  }

  const responseOf = (url: string, thread: string) =>
    until(async () => (await messages(url, thread)).find((m) => m.kind === 'response') ?? undefined, 60_000);

  it('reads ApprovalDenied with the reason as the tool result and goes on to answer', async () => {
    const { dir, file } = await agentOrganism();
    const daemon = await start(file);
    const injected = await call(daemon.url, '/api/v1/inject', {
      body: { to: 'worker', payload: '<worker><task>Run the command.</task></worker>' },
    });
    expect(injected.status).toBe(202);
    const thread = injected.json.thread as string;
    const approval = await pending(daemon.url, thread);
    const denied = await call(daemon.url, `/api/v1/approvals/${approval.id}/deny`, {
      body: { reason: 'use the staging box' },
    });
    expect(denied.status).toBe(200);
    const response = await responseOf(daemon.url, thread);
    expect(response.payload).toContain('Could not: ApprovalDenied');
    expect(response.payload).toContain('use the staging box');
    expect(await ranLines(dir)).toEqual([]);
  }, 120_000);

  it('waits again after kill -9 and a restart (same approval), and runs the call once when approved', async () => {
    const { dir, file } = await agentOrganism();
    const first = await start(file);
    const injected = await call(first.url, '/api/v1/inject', {
      body: { to: 'worker', payload: '<worker><task>Run the command.</task></worker>' },
    });
    const thread = injected.json.thread as string;
    const approval = await pending(first.url, thread);
    await first.stop('SIGKILL');
    const daemon = await start(file);
    const again = await pending(daemon.url, thread);
    expect(again.id).toBe(approval.id);
    const approved = await call(daemon.url, `/api/v1/approvals/${approval.id}/approve`, { body: {} });
    expect(approved.status).toBe(200);
    // Either the answer comes, or (wrongly) the resumed agent asks again under another id.
    const outcome = await until(async () => {
      const response = (await messages(daemon.url, thread)).find((m) => m.kind === 'response');
      if (response) return { response };
      const waiting = (await call(daemon.url, '/api/v1/approvals')).json.approvals as any[];
      return waiting.length > 0 ? { waiting } : undefined;
    }, 60_000);
    expect(outcome.waiting).toBeUndefined();
    expect(outcome.response.payload).toContain('Ran it: 0.');
    expect(await ranLines(dir)).toEqual(['agent']);
    expect((await call(daemon.url, '/api/v1/approvals')).json.approvals).toEqual([]);
  }, 120_000);
});
