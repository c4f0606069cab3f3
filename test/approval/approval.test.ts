/**
 * Human approval of tool calls (issue 19), with the real daemon: run_command under
 * `approval: always` waits as an <approval-request> in its thread, shows in the API, the CLI and the
 * stream; approving runs it once and the thread goes on; denying (or no answer in time) answers the
 * caller with ApprovalDenied and the reason; roles are checked; the audit records who decided and
 * why; the handler's time limit stands still while it waits. Restarts: restart.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type DaemonProcess, runCli } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  call,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';
import { answer, inject, messages, organismYaml, pending, ranLines, TOOLBOX } from './helpers.ts';

describe('approval with the real daemon and tokens', () => {
  let daemon: DaemonProcess;
  let dir: string;
  let url: string;

  beforeAll(async () => {
    const made = await organismDir('');
    dir = made.dir;
    await (await import('node:fs/promises')).writeFile(made.file, organismYaml(dir, true));
    daemon = await startOn(made.file, TOKENS_ENV);
    url = daemon.url;
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop('SIGKILL');
  });

  it('always: the call waits in the API, CLI and stream; a viewer cannot approve; approved by an operator it runs once and the thread goes on', async () => {
    const stream = new WebSocket(`${url.replace('http', 'ws')}/api/v1/stream?kinds=approval`, {
      headers: { authorization: `Bearer ${VIEWER_TOKEN}` },
    });
    const events: any[] = [];
    stream.on('message', (data) => events.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => {
      stream.once('open', resolve);
      stream.once('error', reject);
    });
    try {
      const thread = await inject(url, 'use-tool', 'echo first >> ran.txt', OPERATOR_TOKEN);
      const approval = await pending(url, thread, VIEWER_TOKEN);
      expect(approval).toMatchObject({
        state: 'pending',
        listener: 'toolbox',
        tool: 'run_command',
        why: 'always',
        role: 'operator',
        args: { command: 'echo first >> ran.txt' },
        decided_by: null,
      });
      expect(approval.id).toMatch(/^ap_[0-9a-f]{24}$/);
      const byThread = await call(url, `/api/v1/approvals?thread=${thread}`, { token: VIEWER_TOKEN });
      expect(byThread.json.approvals.map((a: any) => a.id)).toEqual([approval.id]);
      const otherListener = await call(url, '/api/v1/approvals?listener=strict', { token: VIEWER_TOKEN });
      expect(otherListener.json.approvals).toEqual([]);
      expect(await ranLines(dir)).toEqual([]);
      // The thread holds the request (recorded once the store has it, so a moment after it is
      // listed); the CLI lists it; the stream told of it.
      const kinds = await until(async () => {
        const found = (await messages(url, thread, VIEWER_TOKEN)).map((m) => m.kind);
        return found.includes('approval-request') ? found : undefined;
      });
      expect(kinds).toContain('approval-request');
      const listed = await runCli(['approvals', 'list', '--url', url], { ORGANISM_TOKEN: VIEWER_TOKEN });
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(approval.id);
      expect(listed.stdout).toContain('run_command by toolbox');
      await until(() => events.find((e) => e.event === 'requested' && e.approval.id === approval.id));

      const byViewer = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
        token: VIEWER_TOKEN,
        body: { reason: 'me too' },
      });
      expect(byViewer.status).toBe(403);
      expect(byViewer.json.error.code).toBe('auth.forbidden');

      const approved = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
        token: OPERATOR_TOKEN,
        body: { reason: 'checked the command' },
      });
      expect(approved.status).toBe(200);
      expect(approved.json).toMatchObject({
        state: 'approved',
        decided_by: 'ops',
        reason: 'checked the command',
      });
      const again = await call(url, `/api/v1/approvals/${approval.id}/deny`, {
        token: ADMIN_TOKEN,
        body: {},
      });
      expect(again.status).toBe(409);
      expect(again.json.error.code).toBe('approval.decided');

      const result = await answer(url, thread, VIEWER_TOKEN);
      expect(result.status).toBe('ok');
      expect(await ranLines(dir)).toEqual(['first']);
      const after = (await messages(url, thread, VIEWER_TOKEN)).map((m) => m.kind);
      expect(after.indexOf('approval-decision')).toBeGreaterThan(after.indexOf('approval-request'));
      expect(after.indexOf('tool-result')).toBeGreaterThan(after.indexOf('approval-decision'));
      await until(() => events.find((e) => e.event === 'approved' && e.approval.id === approval.id));
      const list = await call(url, '/api/v1/approvals', { token: VIEWER_TOKEN });
      expect(list.json.approvals.map((a: any) => a.id)).not.toContain(approval.id);

      // The audit says who decided and why.
      const audit = await call(url, '/api/v1/audit?type=approval', { token: VIEWER_TOKEN });
      expect(audit.status).toBe(200);
      expect(audit.json.records).toContainEqual(
        expect.objectContaining({
          type: 'approval',
          decision: 'approved',
          approval: approval.id,
          tool: 'run_command',
          listener: 'toolbox',
          thread,
          by: 'ops',
          reason: 'checked the command',
        }),
      );
    } finally {
      stream.close();
    }
  }, 120_000);

  it('deny with a reason (CLI): the caller reads ApprovalDenied with the reason, and nothing runs', async () => {
    const thread = await inject(url, 'use-tool', 'echo denied >> ran.txt', OPERATOR_TOKEN);
    const approval = await pending(url, thread, VIEWER_TOKEN);
    // By the first 8 characters of its id, as the dashboard shows it.
    const denied = await runCli(
      ['approvals', 'deny', approval.id.slice(0, 8), '--reason', 'not on a Friday', '--url', url],
      {
        ORGANISM_TOKEN: OPERATOR_TOKEN,
      },
    );
    expect(denied.stderr).toBe('');
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain(`${approval.id}: denied by ops (not on a Friday)`);
    const result = await answer(url, thread, VIEWER_TOKEN);
    expect(result.status).toBe('refused');
    expect(result.result.code).toBe('ApprovalDenied');
    expect(result.result.message).toContain('denied by ops: not on a Friday');
    expect(await ranLines(dir)).not.toContain('denied');
    const audit = await call(url, '/api/v1/audit?type=approval', { token: VIEWER_TOKEN });
    expect(audit.json.records).toContainEqual(
      expect.objectContaining({
        approval: approval.id,
        decision: 'denied',
        by: 'ops',
        reason: 'not on a Friday',
      }),
    );
  }, 120_000);

  it('no decision within approval_timeout_ms is a denial', async () => {
    const thread = await inject(url, 'use-tool-hasty', 'echo late >> ran.txt', OPERATOR_TOKEN);
    const result = await answer(url, thread, VIEWER_TOKEN);
    expect(result.status).toBe('refused');
    expect(result.result.code).toBe('ApprovalDenied');
    expect(result.result.message).toContain('no decision within 1000 ms');
    expect(await ranLines(dir)).not.toContain('late');
    const audit = await call(url, '/api/v1/audit?type=approval', { token: VIEWER_TOKEN });
    expect(audit.json.records).toContainEqual(
      expect.objectContaining({ thread, decision: 'timed_out', by: 'organism' }),
    );
  }, 120_000);

  it('approval_role: admin refuses an operator and takes an admin', async () => {
    const thread = await inject(url, 'use-tool-strict', 'echo strict >> ran.txt', OPERATOR_TOKEN);
    const approval = await pending(url, thread, VIEWER_TOKEN);
    expect(approval.role).toBe('admin');
    const byOperator = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
      token: OPERATOR_TOKEN,
      body: {},
    });
    expect(byOperator.status).toBe(403);
    expect(byOperator.json.error.code).toBe('approval.forbidden');
    // No body at all: no reason.
    const byAdmin = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
      token: ADMIN_TOKEN,
      method: 'POST',
    });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.json).toMatchObject({ decided_by: 'root', reason: null });
    expect((await answer(url, thread, VIEWER_TOKEN)).status).toBe('ok');
    expect(await ranLines(dir)).toContain('strict');
  }, 120_000);

  it('destructive asks for run_command (it has side effects), saying why', async () => {
    const thread = await inject(url, 'use-tool-careful', 'echo careful >> ran.txt', OPERATOR_TOKEN);
    const approval = await pending(url, thread, VIEWER_TOKEN);
    expect(approval).toMatchObject({ listener: 'careful', why: 'destructive: the tool has side effects' });
    const denied = await call(url, `/api/v1/approvals/${approval.id}/deny`, {
      token: OPERATOR_TOKEN,
      body: { reason: 'no' },
    });
    expect(denied.status).toBe(200);
    expect((await answer(url, thread, VIEWER_TOKEN)).result.code).toBe('ApprovalDenied');
  }, 120_000);

  it('killing the thread denies its waiting approval, so a late approval cannot run the call', async () => {
    const thread = await inject(url, 'use-tool', 'echo killed >> ran.txt', OPERATOR_TOKEN);
    const approval = await pending(url, thread, VIEWER_TOKEN);
    const killed = await call(url, `/api/v1/threads/${thread}/kill`, { token: ADMIN_TOKEN, method: 'POST' });
    expect(killed.status).toBe(200);
    const decided = await until(async () => {
      const res = await call(url, `/api/v1/approvals/${approval.id}`, { token: VIEWER_TOKEN });
      return res.json.state === 'pending' ? undefined : res.json;
    });
    expect(decided).toMatchObject({
      state: 'denied',
      decided_by: 'organism',
      reason: 'its thread was stopped',
    });
    const late = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
      token: ADMIN_TOKEN,
      body: {},
    });
    expect(late.status).toBe(409);
    expect(await ranLines(dir)).not.toContain('killed');
  }, 120_000);

  it('organism approvals: usage mistakes exit 2 naming them; an unknown id exits 1 with the API error', async () => {
    const bad = await runCli(['approvals', 'frobnicate', '--url', url], { ORGANISM_TOKEN: VIEWER_TOKEN });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown action 'frobnicate'; use list, approve or deny");
    const noId = await runCli(['approvals', 'approve', '--url', url], { ORGANISM_TOKEN: OPERATOR_TOKEN });
    expect(noId.code).toBe(2);
    expect(noId.stderr).toContain('give the id of the approval to approve');
    const unknown = await runCli(['approvals', 'approve', 'ap_000000000000000000000000', '--url', url], {
      ORGANISM_TOKEN: OPERATOR_TOKEN,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('404 approval.not_found');
  }, 60_000);

  it('a bad reason and an unknown id are refused with what is wrong', async () => {
    const unknown = await call(url, '/api/v1/approvals/ap_000000000000000000000000/approve', {
      token: OPERATOR_TOKEN,
      body: {},
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('approval.not_found');
    const bad = await call(url, '/api/v1/approvals/ap_000000000000000000000000/deny', {
      token: OPERATOR_TOKEN,
      body: { reason: 42 },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain('reason');
  });
});

describe("the handler's time limit while its call waits for a person", () => {
  it('stands still: a 1.5 s handler approved after 3 s of waiting still runs its call and answers', async () => {
    const { dir, file } = await organismDir('');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      file,
      `organism:
  name: approval-clock
  workspace: ${dir}/ws
listeners:
  - name: toolbox
    handler: ${TOOLBOX}
    trust: high
    timeout_ms: 1500
    tools: [run_command]
    tool_config:
      run_command: { shell: true, approval: always }
`,
    );
    const daemon = await startOn(file);
    try {
      const thread = await inject(daemon.url, 'use-tool', 'echo patient >> ran.txt');
      const approval = await pending(daemon.url, thread);
      // Twice the handler's limit passes while the call waits.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const approved = await call(daemon.url, `/api/v1/approvals/${approval.id}/approve`, { body: {} });
      expect(approved.status).toBe(200);
      expect((await answer(daemon.url, thread)).status).toBe('ok');
      expect(await ranLines(dir)).toEqual(['patient']);
      expect((await messages(daemon.url, thread)).map((m) => m.kind)).not.toContain('system-error');
    } finally {
      await daemon.stop('SIGKILL');
    }
  }, 120_000);
});
