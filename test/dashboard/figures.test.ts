/**
 * The dashboard's figures say what is true (issue 30), in chromium against the real daemon: a
 * thread whose handler failed shows "failed", one waiting for a person "waiting for approval", a
 * finished one "done"; "in flight" is measured against the listener's concurrency (max_concurrent),
 * not its queue length; hop latency is p50/p95 without the time a call waited for an approval; every
 * page says it is loading before its first answer, and the stream's badge says "connecting…", not
 * "offline", before the stream first opens.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
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

describe('dashboard figures', () => {
  let daemon: DaemonProcess;
  let browser: Browser;
  let url: string;
  const pageErrors: string[] = [];

  async function inject(payload: string): Promise<string> {
    const res = await call(url, '/api/v1/inject', { token: OPERATOR_TOKEN, body: { payload } });
    expect(res.status).toBe(202);
    return res.json.thread as string;
  }

  async function pendingIn(thread: string): Promise<{ id: string }> {
    return until(async () => {
      const res = await call(url, '/api/v1/approvals', { token: VIEWER_TOKEN });
      return (res.json.approvals as Array<{ id: string; thread: string }>).find((a) => a.thread === thread);
    }, 30_000);
  }

  async function idle(thread: string): Promise<void> {
    await until(async () => {
      const res = await call(url, `/api/v1/threads/${thread}`, { token: VIEWER_TOKEN });
      return res.json.status === 'idle' || undefined;
    }, 30_000);
  }

  const signIn = (token: string) => signInAs(browser, url, token, pageErrors);

  beforeAll(async () => {
    const made = await organismDir('');
    await writeFile(join(made.dir, 'runner.script.yaml'), SCRIPT);
    // The printer runs 3 handlers at once and queues 40: the overview must show 3.
    const yaml = organismYaml(made.dir).replace(
      '  - name: printer\n',
      '  - name: printer\n    max_concurrent: 3\n    queue_length: 40\n',
    );
    await writeFile(made.file, yaml);
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

  it('thread status: failed, waiting for approval, done (list and thread view)', async () => {
    const failed = await inject('<break><why>status check</why></break>');
    const waiting = await inject('<runner><task>run: echo status</task></runner>');
    const done = await inject('<runner><task>say hi</task></runner>');
    await pendingIn(waiting);
    await idle(failed);
    await idle(done);
    const { context, page } = await signIn(VIEWER_TOKEN);
    await page.getByRole('navigation').getByRole('link', { name: 'Threads' }).click();
    const status = (thread: string) => page.locator(`tr[data-thread="${thread}"] .status`);
    await expect.poll(() => status(failed).textContent(), { timeout: 10_000 }).toBe('failed');
    await expect.poll(() => status(waiting).textContent(), { timeout: 10_000 }).toBe('waiting for approval');
    await expect.poll(() => status(done).textContent(), { timeout: 10_000 }).toBe('done');
    for (const [thread, text] of [
      [failed, 'failed'],
      [waiting, 'waiting for approval'],
      [done, 'done'],
    ] as const) {
      await page.goto(`${url}/#/threads/${thread}`);
      await page.getByTestId('thread-status').filter({ hasText: text }).waitFor();
    }
    await context.close();
  }, 60_000);

  it("in flight is measured against the listener's concurrency, not its queue length", async () => {
    const listeners = await call(url, '/api/v1/listeners', { token: VIEWER_TOKEN });
    const printer = (listeners.json.listeners as Array<{ name: string; state: Record<string, number> }>).find(
      (l) => l.name === 'printer',
    )!;
    expect(printer.state).toMatchObject({ capacity: 40, concurrency: 3 });
    const { context, page } = await signIn(VIEWER_TOKEN);
    const cell = page.locator('tr[data-listener="printer"] [data-testid="in-flight"]');
    await cell.waitFor();
    expect(await cell.textContent()).toMatch(/^\d+ \/ 3$/);
    expect(await page.locator('thead').first().textContent()).toContain('In flight / concurrency');
    await context.close();
  }, 30_000);

  it('hop latency p50/p95 leave out the time a call waited for a person', async () => {
    const thread = await inject('<runner><task>run: echo slow-person</task></runner>');
    const approval = await pendingIn(thread);
    // A person takes 3 s to decide.
    await new Promise((r) => setTimeout(r, 3000));
    const decided = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
      token: ADMIN_TOKEN,
      body: { reason: 'after a while' },
    });
    expect(decided.status).toBe(200);
    await idle(thread);
    // The interval holding the agent's hop: its mean counts the 3 s, its percentiles do not.
    const point = await until(async () => {
      const res = await call(url, '/api/v1/metrics/series', { token: VIEWER_TOKEN });
      const points = res.json.points as Array<Record<string, number | null>>;
      return points.find((p) => (p.hop_latency_ms ?? 0) >= 600) ?? undefined;
    }, 20_000);
    expect(point.hop_p95_ms).not.toBeNull();
    expect(point.hop_p95_ms!).toBeLessThan(1500);
    expect(point.hop_p50_ms!).toBeLessThanOrEqual(point.hop_p95_ms!);

    const { context, page } = await signIn(VIEWER_TOKEN);
    const charts = page.locator('figure.chart');
    await charts.filter({ hasText: 'Hop latency p95' }).waitFor();
    expect(await charts.filter({ hasText: 'Hop latency p50' }).count()).toBe(1);
    expect(await charts.filter({ hasText: 'mean' }).count()).toBe(0);
    await context.close();
  }, 60_000);

  it('every page shows a loading state before its first answer, and "connecting…" (not "offline") before the stream opens', async () => {
    const { context, page } = await signIn(ADMIN_TOKEN);
    // Every badge text the page shows from its first frame on.
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { badges: string[] }).badges = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="stream-state"]')?.textContent ?? '';
        if (text && seen[seen.length - 1] !== text) seen.push(text);
      }).observe(document, { childList: true, subtree: true, characterData: true });
    });
    // The stream opens 1.5 s late and every API answer comes 0.8 s late.
    await page.routeWebSocket(/\/api\/v1\/stream/, (ws) => {
      setTimeout(() => ws.connectToServer(), 1500);
    });
    await page.route(/\/api\/v1\//, async (route) => {
      await new Promise((r) => setTimeout(r, 800));
      await route.continue();
    });
    for (const [path, what] of [
      ['overview', 'Loading listeners…'],
      ['threads', 'Loading threads…'],
      ['approvals', 'Loading approvals…'],
      ['audit', 'Loading audit records…'],
      ['dead-letters', 'Loading dead letters…'],
      ['tools', 'Loading tools…'],
    ] as const) {
      await page.goto(`${url}/#/${path}`);
      await page.reload();
      const loading = page.getByTestId('loading').filter({ hasText: what });
      await loading.waitFor({ timeout: 10_000 });
      await loading.waitFor({ state: 'detached', timeout: 15_000 });
    }
    await page.getByTestId('stream-state').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
    const badges = await page.evaluate(() => (window as unknown as { badges: string[] }).badges);
    expect(badges[0]).toBe('connecting…');
    expect(badges).not.toContain('offline');
    await context.close();
  }, 120_000);

  it('the pages raised no error', () => {
    expect(pageErrors).toEqual([]);
  });
});
