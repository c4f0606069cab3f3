/**
 * The dashboard while things happen (issue 30), in chromium against the real daemon: a thread's
 * waterfall drawn while the thread waits for a person grows on the same page (no reload) once the
 * call is approved; a listener whose handler throws shows its failure count on its graph node, and
 * its thread shows failed.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
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
import { CHROMIUM_ARGS, organismYaml, SCRIPT, signIn as signInAs } from './support.ts';

interface Row {
  kind: string | null;
  name: string;
  duration: string;
}

async function bars(page: Page): Promise<Row[]> {
  return page.locator('ol.bars > li').evaluateAll((items) =>
    items.map((li) => ({
      kind: li.getAttribute('data-bar'),
      name: li.querySelector('.bar-name')?.textContent ?? '',
      duration: li.querySelector('[data-testid="duration"]')?.textContent ?? '',
    })),
  );
}

describe('the dashboard, live', () => {
  let daemon: DaemonProcess;
  let browser: Browser;
  let url: string;
  const pageErrors: string[] = [];

  async function inject(payload: string): Promise<string> {
    const res = await call(url, '/api/v1/inject', { token: OPERATOR_TOKEN, body: { payload } });
    expect(res.status).toBe(202);
    return res.json.thread as string;
  }

  const signIn = (token: string) => signInAs(browser, url, token, pageErrors, { width: 1400, height: 1000 });

  beforeAll(async () => {
    const made = await organismDir('');
    await writeFile(join(made.dir, 'runner.script.yaml'), SCRIPT);
    await writeFile(made.file, organismYaml(made.dir));
    [daemon, browser] = await Promise.all([
      startOn(made.file, TOKENS_ENV),
      chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS }),
    ]);
    url = daemon.url;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop('SIGKILL');
  });

  it('the waterfall of a running thread grows on the same page once its call is approved', async () => {
    const thread = await inject('<runner><task>run: echo live-bars</task></runner>');
    const approval = await until(async () => {
      const res = await call(url, '/api/v1/approvals', { token: VIEWER_TOKEN });
      return (res.json.approvals as Array<{ id: string; thread: string }>).find((a) => a.thread === thread);
    }, 30_000);

    const { context, page } = await signIn(VIEWER_TOKEN);
    await page.goto(`${url}/#/threads/${thread}`);
    await page.locator('li[data-bar="approval-wait"]').waitFor();
    // A mark on this document: gone if the page were loaded again.
    await page.evaluate(() => {
      (window as unknown as { samePage: boolean }).samePage = true;
    });
    const before = await bars(page);
    expect(before.map((b) => b.kind)).toEqual(['hop', 'model-turn', 'tool-call', 'approval-wait']);
    expect(before[0]!.name).toBe('api → runner');
    expect(before[2]!.name).toBe('runner → run_command');
    // The call and the wait are still open, and their bars grow while the page is open.
    expect(before[2]!.duration).toMatch(/…$/);
    expect(before[3]!.duration).toMatch(/…$/);
    const wait = page.locator('li[data-bar="approval-wait"] [data-testid="duration"]');
    const first = await wait.textContent();
    await expect.poll(() => wait.textContent(), { timeout: 5_000 }).not.toBe(first);

    const decided = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
      token: ADMIN_TOKEN,
      body: { reason: 'live waterfall' },
    });
    expect(decided.status).toBe(200);

    // The answer's turn comes as a new bar; the call and the wait close, without a reload.
    await expect
      .poll(async () => (await bars(page)).filter((b) => b.kind === 'model-turn').length, {
        timeout: 20_000,
      })
      .toBe(2);
    await page.getByTestId('thread-status').filter({ hasText: 'done' }).waitFor({ timeout: 20_000 });
    const after = await bars(page);
    expect(after.length).toBeGreaterThan(before.length);
    expect(after.slice(0, 4).map((b) => b.kind)).toEqual(['hop', 'model-turn', 'tool-call', 'approval-wait']);
    for (const b of after) expect(b.duration, b.name).toMatch(/^\d+(\.\d)? m?s$/);
    expect(await page.evaluate(() => (window as unknown as { samePage?: boolean }).samePage)).toBe(true);
    await context.close();
  }, 90_000);

  it('a listener whose handler throws: its failures on its graph node, its thread failed', async () => {
    const { context, page } = await signIn(VIEWER_TOKEN);
    const node = page.locator('[data-node="l:broken"]');
    await node.waitFor();
    expect(await node.textContent()).not.toContain('failed');

    const threads = [
      await inject('<break><why>graph one</why></break>'),
      await inject('<break><why>graph two</why></break>'),
    ];
    await expect.poll(() => node.textContent(), { timeout: 15_000 }).toContain('2 failed');

    for (const thread of threads) {
      await page.goto(`${url}/#/threads/${thread}`);
      await page.getByTestId('thread-status').filter({ hasText: 'failed' }).waitFor({ timeout: 15_000 });
    }
    await context.close();
  }, 60_000);

  it('the pages raised no error', () => {
    expect(pageErrors).toEqual([]);
  });
});
