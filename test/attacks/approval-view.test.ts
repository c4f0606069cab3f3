/**
 * Attacks on what a person is shown when asked to approve a call (issue 25, point 1), with the real
 * daemon and real bubblewrap: text that looks like a credential (`X_TOKEN=...`, `PASSWORD=...`, a
 * long base64-like run) and text past the redaction's length cut were hidden from the approver,
 * who then approved something else than what ran. Now the approver sees the arguments as they run,
 * only values of the daemon's own secrets masked (and the mask says so); arguments that cannot be
 * shown faithfully are refused as not reviewable; the audit keeps what was shown and a digest of
 * what ran.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/tools/canonical.ts';
import { answer, inject, messages, organismYaml, pending } from '../approval/helpers.ts';
import { type DaemonProcess, runCli } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  call,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  VIEWER_TOKEN,
} from '../server/helpers.ts';

const unescapeXml = (text: string) =>
  text
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

const sha256 = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');

describe('the approver sees what runs', () => {
  let daemon: DaemonProcess;
  let dir: string;
  let url: string;

  beforeAll(async () => {
    const made = await organismDir('');
    dir = made.dir;
    await writeFile(made.file, organismYaml(dir, true));
    daemon = await startOn(made.file, TOKENS_ENV);
    url = daemon.url;
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop('SIGKILL');
  });

  /** Asks for `command`, checks every place a person reads it shows it whole, then approves it. */
  async function shownWhole(command: string) {
    const thread = await inject(url, 'use-tool', command, OPERATOR_TOKEN);
    const approval = await pending(url, thread, VIEWER_TOKEN);
    expect(approval.args).toEqual({ command });
    expect(approval.args_sha256).toBe(sha256({ command }));
    const byId = await call(url, `/api/v1/approvals/${approval.id}`, { token: VIEWER_TOKEN });
    expect(byId.json.args).toEqual({ command });
    const listed = await runCli(['approvals', 'list', '--url', url], { ORGANISM_TOKEN: VIEWER_TOKEN });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(JSON.stringify({ command }));
    const request = (await messages(url, thread, VIEWER_TOKEN)).find((m) => m.kind === 'approval-request');
    expect(JSON.parse(unescapeXml(/<args>([^<]*)<\/args>/.exec(request.payload)![1]!))).toEqual({ command });
    const approved = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
      token: OPERATOR_TOKEN,
      body: {},
    });
    expect(approved.status).toBe(200);
    return { thread, approval };
  }

  it('a command substitution after X_TOKEN= is shown, and the audit keeps what was shown and the digest of what ran', async () => {
    const command = 'X_TOKEN="$(echo PWNED > pwned.txt)" ls';
    const { thread, approval } = await shownWhole(command);
    expect((await answer(url, thread, VIEWER_TOKEN)).status).toBe('ok');
    expect(await readFile(join(dir, 'ws', 'pwned.txt'), 'utf8')).toBe('PWNED\n');
    const audit = await call(url, `/api/v1/audit?type=approval&thread=${thread}`, { token: VIEWER_TOKEN });
    const record = audit.json.records.find((r: any) => r.approval === approval.id);
    expect(record).toMatchObject({
      decision: 'approved',
      args: { command },
      args_sha256: sha256({ command }),
    });
    const calls = await call(url, `/api/v1/audit?type=call&thread=${thread}`, { token: VIEWER_TOKEN });
    const ran = calls.json.records.find((r: any) => r.tool === 'run_command');
    expect(ran).toMatchObject({ approval: approval.id, args_sha256: sha256({ command }) });
  }, 120_000);

  it('PASSWORD=, a bearer header, a long base64-like run and text past 2,048 characters are shown whole', async () => {
    for (const command of [
      'PASSWORD=$(touch p1.txt) true',
      'curl -H "Authorization: Bearer $(touch p2.txt)" http://127.0.0.1:9 || true',
      'echo QWxhZGRpbjpvcGVuIHNlc2FtZQAbCdEfGh1234567890abcdEFGH; touch p3.txt',
      `echo ${'a'.repeat(3000)} > /dev/null; touch p4.txt`,
    ]) {
      const { thread } = await shownWhole(command);
      expect((await answer(url, thread, VIEWER_TOKEN)).status).toBe('ok');
    }
  }, 240_000);

  it("only the daemon's own secrets are masked, and the mask says so", async () => {
    const command = `echo ${ADMIN_TOKEN} > leak.txt`;
    const thread = await inject(url, 'use-tool', command, OPERATOR_TOKEN);
    const approval = await pending(url, thread, VIEWER_TOKEN);
    expect(approval.args.command).toBe('echo [known secret masked] > leak.txt');
    expect(JSON.stringify(approval)).not.toContain(ADMIN_TOKEN);
    expect(approval.args_sha256).toBe(sha256({ command }));
    await call(url, `/api/v1/approvals/${approval.id}/deny`, { token: ADMIN_TOKEN, body: {} });
  }, 120_000);

  it('arguments that cannot be shown as they run are refused as not reviewable, and nobody is asked', async () => {
    for (const command of [
      // Right-to-left override: the terminal shows the tail reversed.
      'echo safe \u202e; touch rlo.txt',
      // Zero-width and other invisible characters between words.
      'ls\u200b; touch zw.txt',
      // A C1 control (CSI) that a terminal may act on.
      'ls \u009b2J; touch c1.txt',
      // The mask's own text, which would read as a masked secret.
      'echo [known secret masked]; touch mask.txt',
    ]) {
      const thread = await inject(url, 'use-tool', command, OPERATOR_TOKEN);
      const result = await answer(url, thread, VIEWER_TOKEN);
      expect(result.status).toBe('refused');
      expect(result.result.code).toBe('NotReviewable');
      const list = await call(url, `/api/v1/approvals?thread=${thread}`, { token: VIEWER_TOKEN });
      expect(list.json.approvals).toEqual([]);
    }
  }, 240_000);
});
