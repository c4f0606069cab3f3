/**
 * Attacks on the dashboard (issue 19) in chromium against the real daemon: markup an attacker
 * controls (a task's text, a tool call's arguments waiting for approval, a failing handler's
 * message, an approval's reason) is shown as text on every page, never as elements; the page's
 * headers forbid framing and sniffing; a viewer's actions are refused by the API whatever the UI.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, organismYaml, SCRIPT } from '../dashboard/support.ts';
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

/** Would create elements (and run script, were the policy not there) if any page used it as HTML. */
const XSS = `<img id="pwn" src="x" onerror="window.__pwned=1"><svg id="pwn2" onload="window.__pwned=2"></svg>`;
const escaped = XSS.replaceAll('&', '&amp;')
  .replaceAll('<', '&lt;')
  .replaceAll('>', '&gt;')
  .replaceAll('"', '&quot;');

describe('dashboard attacks', () => {
  let daemon: DaemonProcess;
  let browser: Browser;
  let url: string;

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

  async function signIn(token: string): Promise<Page> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('who').waitFor();
    return page;
  }

  async function noInjectedElements(page: Page, where: string): Promise<void> {
    expect(await page.locator('#pwn, #pwn2, img[src="x"]').count(), where).toBe(0);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned), where).toBeUndefined();
  }

  it('markup in a task, in arguments waiting for approval, in a failure and in a reason is text on every page', async () => {
    const inject = async (payload: string) => {
      const res = await call(url, '/api/v1/inject', { token: OPERATOR_TOKEN, body: { payload } });
      expect(res.status).toBe(202);
      return res.json.thread as string;
    };
    const thread = await inject(`<runner><task>run: echo ${escaped}</task></runner>`);
    const broken = await inject(`<break><why>${escaped}</why></break>`);
    const approval = await until(async () => {
      const res = await call(url, '/api/v1/approvals', { token: VIEWER_TOKEN });
      return (res.json.approvals as Array<{ id: string; thread: string }>).find((a) => a.thread === thread);
    }, 30_000);

    const page = await signIn(ADMIN_TOKEN);
    await page.goto(`${url}/#/approvals`);
    await page.getByText('pwn', { exact: false }).first().waitFor();
    await noInjectedElements(page, 'approvals page');

    await page.goto(`${url}/#/threads/${thread}`);
    await page.locator('li[data-kind="approval-request"]').waitFor();
    await noInjectedElements(page, 'thread view, waiting');
    const denied = await call(url, `/api/v1/approvals/${approval.id}/deny`, {
      token: ADMIN_TOKEN,
      body: { reason: XSS },
    });
    expect(denied.status).toBe(200);
    await page.locator('li[data-kind="approval-decision"]').waitFor();
    await page.locator('li[data-kind="response"]').waitFor();
    // The reason shows as the characters it is.
    expect(await page.locator('li[data-kind="approval-decision"]').textContent()).toContain('<img id="pwn"');
    await noInjectedElements(page, 'thread view, decided');

    await page.goto(`${url}/#/threads/${broken}`);
    await page.locator('li[data-kind="failure"]').waitFor();
    expect(await page.locator('li[data-kind="failure"]').textContent()).toContain('<svg id="pwn2"');
    await noInjectedElements(page, 'failure');

    for (const path of ['overview', 'threads', 'audit', 'dead-letters', 'tools']) {
      await page.goto(`${url}/#/${path}`);
      await page.waitForLoadState('networkidle');
      await noInjectedElements(page, path);
    }
  }, 120_000);

  it('the page forbids framing and sniffing, and sends no Referer', async () => {
    const res = await fetch(`${url}/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await res.text()).includes('name="referrer" content="no-referrer"')).toBe(true);
  });

  it("a viewer's actions are refused by the API itself", async () => {
    const thread = await (async () => {
      const res = await call(url, '/api/v1/inject', {
        token: OPERATOR_TOKEN,
        body: { payload: '<runner><task>run: echo viewer</task></runner>' },
      });
      return res.json.thread as string;
    })();
    const approval = await until(async () => {
      const res = await call(url, '/api/v1/approvals', { token: VIEWER_TOKEN });
      return (res.json.approvals as Array<{ id: string; thread: string }>).find((a) => a.thread === thread);
    }, 30_000);
    const tries: Array<[string, unknown]> = [
      [`/api/v1/approvals/${approval.id}/approve`, {}],
      [`/api/v1/approvals/${approval.id}/deny`, {}],
      ['/api/v1/inject', { payload: '<runner><task>hi</task></runner>' }],
      [`/api/v1/threads/${thread}/kill`, {}],
    ];
    for (const [path, body] of tries) {
      const res = await call(url, path, { token: VIEWER_TOKEN, body });
      expect(res.status, path).toBe(403);
    }
    const still = await call(url, `/api/v1/approvals/${approval.id}`, { token: VIEWER_TOKEN });
    expect(still.json.state).toBe('pending');
    await call(url, `/api/v1/approvals/${approval.id}/deny`, { token: ADMIN_TOKEN, body: {} });
  }, 60_000);
});
