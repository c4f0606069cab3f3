/**
 * The dashboard in a real browser (Debian's chromium through playwright-core) against the real
 * daemon on 127.0.0.1, signed in with each role's token: a viewer watches threads appear and fill
 * live and sees no action controls; an operator injects from the form; an admin approves one
 * pending run_command (the agent's thread goes on), denies another (the agent reads
 * ApprovalDenied), kills a thread, pauses and resumes a listener. Failures and guard denials show
 * their cause; axe-core finds no serious or critical violation on any page (the sign-in page and
 * a thread view included). The signed-in link of `organism dashboard` signs in and leaves the
 * address bar. The token is never in a URL, a request line or the daemon's log.
 * Screenshots of the overview and a thread view, and the first load's bytes and a 1,000-message
 * thread's render times over 5 opens (report.json), go to test-results/dashboard/ (gitignored).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { AXE_PATH, axeProblems } from './axe.ts';
import { median, type ThreadTiming, timeThreadView } from './measure.ts';
import { ACTION_CONTROLS, ARTIFACTS, CHROMIUM_ARGS, organismYaml, SCRIPT, wholePage } from './support.ts';

const TOKENS = [ADMIN_TOKEN, OPERATOR_TOKEN, VIEWER_TOKEN];

describe('dashboard in chromium against the real daemon', () => {
  let daemon: DaemonProcess;
  let browser: Browser;
  let url: string;
  let file: string;
  const requested: string[] = [];
  /** Figures for test-results/dashboard/report.json. */
  const report: Record<string, number | number[]> = {};
  const pageErrors: string[] = [];

  async function inject(payload: string, to?: string): Promise<string> {
    const res = await call(url, '/api/v1/inject', { token: OPERATOR_TOKEN, body: { payload, to } });
    expect(res.status).toBe(202);
    return res.json.thread as string;
  }

  async function pendingIn(thread: string): Promise<{ id: string }> {
    return until(async () => {
      const res = await call(url, '/api/v1/approvals', { token: VIEWER_TOKEN });
      return (res.json.approvals as Array<{ id: string; thread: string }>).find((a) => a.thread === thread);
    }, 30_000);
  }

  /** A fresh browser context (its own sessionStorage) signed in with `token`. */
  async function signIn(token: string, expectWho: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(url);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('who').filter({ hasText: expectWho }).waitFor();
    return { context, page };
  }

  beforeAll(async () => {
    const made = await organismDir('');
    await writeFile(join(made.dir, 'runner.script.yaml'), SCRIPT);
    await writeFile(made.file, organismYaml(made.dir));
    file = made.file;
    [daemon, browser] = await Promise.all([
      startOn(made.file, TOKENS_ENV),
      chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS }),
    ]);
    url = daemon.url;
    await mkdir(ARTIFACTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    if (Object.keys(report).length > 0)
      await writeFile(join(ARTIFACTS, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    await browser?.close();
    await daemon?.stop('SIGKILL');
  });

  it('a wrong token is refused at sign-in, and the page holds no data before', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url);
    // The page's policy refuses a script added to it (axe is evaluated over the DevTools protocol).
    await expect(page.addScriptTag({ path: AXE_PATH })).rejects.toThrow(/Content Security Policy/);
    await page.getByLabel('API token').waitFor();
    expect((await axeProblems(page)).problems, 'sign-in').toEqual([]);
    await page.getByLabel('API token').fill('not-a-token-at-all-123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor();
    expect(await page.locator('nav').count()).toBe(0);
    expect((await axeProblems(page)).problems, 'sign-in refused').toEqual([]);
    await context.close();
  }, 30_000);

  it('viewer: a thread injected elsewhere appears and fills live; the thread view; no action controls', async () => {
    const { context, page } = await signIn(VIEWER_TOKEN, 'watcher (viewer)');
    await page.getByRole('link', { name: 'Threads' }).click();
    await page.locator('table[aria-label="Threads"]').waitFor();

    // Injected by another client after the page loaded: the list shows it without a reload.
    const hello = await inject('<runner><task>say hello</task></runner>');
    const row = page.locator(`tr[data-thread="${hello}"]`);
    await row.waitFor();
    await until(async () => ((await row.textContent()) ?? '').includes('api, runner'));

    // An agent's thread waits for approval; the viewer's thread view follows it as it goes on.
    const thread = await inject('<runner><task>run: echo watched</task></runner>');
    const approval = await pendingIn(thread);
    await page.locator(`tr[data-thread="${thread}"] a`).click();
    await page.locator('li[data-kind="approval-request"]').waitFor();
    expect(page.url()).toContain(`#/threads/${thread}`);
    expect(await page.locator('li[data-kind="model-turn"]').first().textContent()).toContain('backend');
    // The request's line can be drawn a moment before its pending state (under load, in CI).
    await page.getByText('waiting for a decision').waitFor();
    expect(await page.getByText('waiting for a decision').count()).toBe(1);
    expect(await page.locator(ACTION_CONTROLS).count()).toBe(0);

    const decided = await call(url, `/api/v1/approvals/${approval.id}/approve`, {
      token: ADMIN_TOKEN,
      body: { reason: 'fine' },
    });
    expect(decided.status).toBe(200);
    // No reload: the stream brings the decision, the tool's result and the agent's answer.
    await page.locator('li[data-kind="approval-decision"]').waitFor();
    await page.locator('li[data-kind="tool-result"]').filter({ hasText: 'watched' }).waitFor();
    const call0 = page.locator('li[data-kind="tool-call"]').first();
    expect(await call0.locator('dl.facts').textContent()).toContain('outcome');
    await page.locator('li[data-kind="response"]').filter({ hasText: 'It ran' }).waitFor();
    await wholePage(page, join(ARTIFACTS, 'thread.png'));

    // No action controls on any page for a viewer.
    for (const name of ['Overview', 'Threads', 'Approvals', 'Audit', 'Dead letters', 'Tools']) {
      await page.getByRole('navigation').getByRole('link', { name, exact: false }).first().click();
      await page.locator('h1').filter({ hasText: name }).waitFor();
      expect(await page.locator(ACTION_CONTROLS).count(), name).toBe(0);
    }
    // The API refuses a viewer anyway.
    const refused = await call(url, '/api/v1/listeners/runner/pause', { token: VIEWER_TOKEN, body: {} });
    expect(refused.status).toBe(403);

    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('tr[data-listener="runner"]').waitFor();
    // The charts have two points (a line) before the screenshot: the daemon keeps one every 5 s.
    await page.locator('polyline.chart-line').first().waitFor({ timeout: 30_000 });
    // The tokens chart reads /metrics every 5 s: it names the runner once a read after its turns came.
    await page
      .locator('figure.chart')
      .filter({ hasText: 'LLM tokens' })
      .filter({ hasText: 'runner' })
      .waitFor({ timeout: 15_000 });
    await wholePage(page, join(ARTIFACTS, 'overview.png'));

    // What a first load weighs (the page, its modules and styles as sent, gzip).
    const bytes = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .concat(performance.getEntriesByType('navigation'))
        .filter((e) => /\/dashboard\/|\/$/.test(new URL(e.name).pathname))
        .reduce((sum, e) => sum + (e as PerformanceResourceTiming).transferSize, 0),
    );
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(200 * 1024);
    report.first_load_bytes = bytes;
    await context.close();
  }, 90_000);

  it('operator: injects from the form with the listener example filled in; no admin controls', async () => {
    const { context, page } = await signIn(OPERATOR_TOKEN, 'ops (operator)');
    await page.getByRole('link', { name: 'Threads' }).click();
    await page.getByLabel('To', { exact: true }).selectOption('runner');
    const payload = page.getByLabel('Payload (XML)');
    await until(async () => (await payload.inputValue()).includes('<runner'));
    await payload.fill('<runner><task>greet Grace</task></runner>');
    await page.getByRole('button', { name: 'Inject' }).click();
    await page.waitForURL(/#\/threads\/[0-9a-f-]{36}$/);
    const thread = decodeURIComponent(page.url().split('#/threads/')[1]!);
    await page.locator('li[data-kind="response"]').filter({ hasText: 'Hello from the runner' }).waitFor();
    const view = await call(url, `/api/v1/threads/${thread}`, { token: VIEWER_TOKEN });
    expect(view.json.messages[0]).toMatchObject({ from: 'api', to: 'runner' });
    expect(view.json.messages[0].payload).toContain('Grace');

    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('tr[data-listener="runner"]').waitFor();
    expect(await page.getByRole('button', { name: /^(Pause|Resume) / }).count()).toBe(0);
    await context.close();
  }, 60_000);

  it('admin: approves a pending run_command (the thread goes on) and denies another (the agent reads ApprovalDenied)', async () => {
    const { context, page } = await signIn(ADMIN_TOKEN, 'root (admin)');
    const approveThread = await inject('<runner><task>run: echo approved-run</task></runner>');
    const denyThread = await inject('<runner><task>run: echo never-run</task></runner>');
    const toApprove = await pendingIn(approveThread);
    const toDeny = await pendingIn(denyThread);

    await page.getByRole('link', { name: /^Approvals/ }).click();
    const card = page.locator(`li[data-approval="${toApprove.id}"]`);
    await card.getByLabel('Reason').fill('looked at it');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.waitFor({ state: 'detached' });
    await page.locator(`a[href="#/threads/${approveThread}"]`).first().click();
    await page.locator('li[data-kind="response"]').filter({ hasText: 'It ran: approved-run' }).waitFor();
    expect(await page.getByText('looked at it').count()).toBeGreaterThan(0);

    // Deny from the thread view itself.
    await page.goto(`${url}/#/threads/${denyThread}`);
    const actions = page.locator(`.approval-actions[data-approval="${toDeny.id}"]`);
    await actions.getByLabel('Reason').fill('not on a Friday');
    await actions.getByRole('button', { name: 'Deny' }).click();
    const answer = page.locator('li[data-kind="response"]').filter({ hasText: 'ApprovalDenied' });
    await answer.waitFor();
    expect(await answer.textContent()).toContain('not on a Friday');
    const decision = await call(url, `/api/v1/approvals/${toDeny.id}`, { token: VIEWER_TOKEN });
    expect(decision.json).toMatchObject({ state: 'denied', decided_by: 'root', reason: 'not on a Friday' });

    // The admin's controls are there: kill a thread that waits, pause and resume a listener.
    const doomed = await inject('<runner><task>run: echo killed</task></runner>');
    await pendingIn(doomed);
    await page.goto(`${url}/#/threads/${doomed}`);
    await page.getByRole('button', { name: 'Kill thread' }).click();
    await page.getByTestId('thread-status').filter({ hasText: 'stopped' }).waitFor();
    const killed = await call(url, `/api/v1/threads/${doomed}`, { token: VIEWER_TOKEN });
    expect(killed.json.status).toBe('stopped');

    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('button', { name: 'Pause runner' }).click();
    await page.locator('tr[data-listener="runner"]').filter({ hasText: 'paused' }).waitFor();
    await page.getByRole('button', { name: 'Resume runner' }).click();
    await page.getByRole('button', { name: 'Pause runner' }).waitFor();
    await context.close();
  }, 60_000);

  it('renders a thread of 1,000 messages, all of it usable (the times it took, over 5 opens, go to the report)', async () => {
    const thread = await inject('<burst><count>999</count></burst>');
    await until(async () => {
      const res = await call(url, `/api/v1/threads/${thread}`, { token: VIEWER_TOKEN });
      return res.json.messages.length === 1000 && res.json.status !== 'active';
    }, 60_000);
    const { context, page } = await signIn(VIEWER_TOKEN, 'watcher (viewer)');
    const runs: ThreadTiming[] = [];
    for (let i = 0; i < 5; i++) {
      // From another page each time, so every open fetches and draws the whole thread again.
      await page.getByRole('navigation').getByRole('link', { name: 'Overview' }).click();
      await page.locator('tr[data-listener="burst"]').waitFor();
      runs.push(await timeThreadView(page, thread, 1000));
      expect(await page.locator('ol.timeline > li').count()).toBe(1000);
    }
    expect(await page.getByTestId('message-count').textContent()).toBe('1000');
    // Every entry is there to read: the last one, scrolled to, shows its message.
    const last = page.locator('ol.timeline > li').last();
    await last.scrollIntoViewIfNeeded();
    expect(await last.isVisible()).toBe(true);
    expect(await last.locator('pre.xml').textContent()).toContain('line 999 of 999');
    expect(await last.locator('.seq').textContent()).toBe('1000');
    for (const [key, pick] of [
      ['thread_1000_messages_render_ms', (r: ThreadTiming) => r.drawn],
      ['thread_1000_messages_in_document_ms', (r: ThreadTiming) => r.dom],
      ['thread_1000_messages_fetch_ms', (r: ThreadTiming) => r.fetch],
    ] as const) {
      const values = runs.map((r) => Math.round(pick(r)));
      report[key] = values;
      report[`${key}_median`] = median(values);
      report[`${key}_max`] = Math.max(...values);
    }
    await context.close();
  }, 90_000);

  it("a failing handler's cause in the thread view and the overview; a guard's denial with rule and suggestion; go to a thread by id", async () => {
    const thread = await inject('<break><why>for the dashboard</why></break>');
    const { context, page } = await signIn(VIEWER_TOKEN, 'watcher (viewer)');
    await page.getByRole('link', { name: 'Threads' }).click();
    await page.getByLabel('Thread id').fill(thread);
    await page.getByRole('button', { name: 'Open' }).click();
    const failure = page.locator('li[data-kind="failure"]');
    await failure.waitFor();
    expect(await failure.locator('.detail').textContent()).toContain(
      'RangeError: broken on purpose: for the dashboard',
    );
    await page.getByRole('link', { name: 'Overview' }).click();
    await page
      .locator('tr[data-listener="broken"]')
      .filter({ hasText: 'RangeError: broken on purpose: for the dashboard' })
      .waitFor();
    expect(await page.locator('tr[data-listener="runner"]').textContent()).toContain('none');

    // A call the guard denies: its verdict, rule and suggestion beside the call; the agent reads it.
    const denied = await inject('<runner><task>run: rm -rf /</task></runner>');
    await page.goto(`${url}/#/threads/${denied}`);
    const facts = page.locator('li[data-kind="tool-call"] dl.facts');
    await facts.filter({ hasText: 'shell.filesystem.rm_root' }).waitFor();
    const text = (await facts.textContent()) ?? '';
    expect(text).toContain('deny');
    expect(text).toContain('suggestion');
    expect(text).toContain('GuardDenied');
    await page.locator('li[data-kind="response"]').filter({ hasText: 'GuardDenied' }).waitFor();
    await context.close();
  }, 30_000);

  it('every page, the sign-in page above and a thread view: axe finds no serious or critical violation; one h1 and a main landmark; tools say why not; audit filters', async () => {
    // One call waiting for approval: the approvals page and the thread view show their controls.
    const waiting = await inject('<runner><task>run: echo for axe</task></runner>');
    await pendingIn(waiting);
    const { context, page } = await signIn(ADMIN_TOKEN, 'root (admin)');
    // axe is seen to fail: a control without a name, put on the page for a moment.
    await page.evaluate(() =>
      document.body.append(Object.assign(document.createElement('button'), { id: 'unnamed' })),
    );
    expect((await axeProblems(page)).problems.join('\n')).toContain('button-name (critical)');
    await page.evaluate(() => document.getElementById('unnamed')?.remove());

    for (const name of ['Overview', 'Threads', 'Approvals', 'Audit', 'Dead letters', 'Tools']) {
      await page.getByRole('navigation').getByRole('link', { name, exact: false }).first().click();
      await page.locator('h1').filter({ hasText: name }).waitFor();
      // Each page with its data in it (rows, cards, charts), not its loading state.
      if (name === 'Overview') await page.locator('tr[data-listener="runner"]').waitFor();
      if (name === 'Threads') await page.locator('tr[data-thread]').first().waitFor();
      if (name === 'Approvals') await page.locator('li[data-approval] button.approve').first().waitFor();
      if (name === 'Audit') await page.locator('tbody tr').first().waitFor();
      if (name === 'Tools') await page.locator('tr[data-tool]').first().waitFor();
      expect(await page.locator('h1').count(), name).toBe(1);
      expect(await page.getByRole('main').count(), name).toBe(1);
      const { problems, passed } = await axeProblems(page);
      expect(problems, name).toEqual([]);
      expect(passed, `${name}: axe checked something`).toBeGreaterThan(10);
    }
    await page.goto(`${url}/#/threads/${waiting}`);
    await page.locator(`.approval-actions button.approve`).waitFor();
    await page.locator('li[data-kind="model-turn"] details.fold summary').first().click();
    await page.locator('li[data-kind="model-turn"] details.fold pre.xml').waitFor();
    expect((await axeProblems(page)).problems, 'thread view').toEqual([]);

    // Tools: for a listener without grants, every tool unavailable with the reason.
    await page.getByRole('navigation').getByRole('link', { name: 'Tools' }).click();
    await page.getByLabel('Listener').selectOption('printer');
    const row = page.locator('tr[data-tool="run_command"]');
    await row.filter({ hasText: 'not granted to printer' }).waitFor();
    await page.getByLabel('Listener').selectOption('runner');
    await row.filter({ hasText: 'yes' }).waitFor();

    // Audit: the approval decisions made above, filtered by type, name who decided and why.
    await page.getByRole('navigation').getByRole('link', { name: 'Audit' }).click();
    await page.getByLabel('Type').selectOption('approval');
    await page.locator('tr[data-type="approval"]').filter({ hasText: 'not on a Friday' }).waitFor();
    // The unfiltered page shows approval rows too: wait for the filter's answer to replace it.
    await expect
      .poll(() => page.locator('tbody tr:not([data-type="approval"])').count(), { timeout: 10_000 })
      .toBe(0);
    await context.close();
  }, 60_000);

  it('the signed-in link of `organism dashboard` signs in as local (admin) and leaves the address bar', async () => {
    const printed = await runCli(['dashboard', '--config', file], { ORGANISM_URL: '', ORGANISM_TOKEN: '' });
    expect(printed.code, printed.stderr).toBe(0);
    const link = printed.stdout.trim();
    const localToken = /#token=([0-9a-f]{64})$/.exec(link)?.[1];
    expect(localToken).toBeDefined();
    TOKENS.push(localToken!);
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(link);
    await page.getByTestId('who').filter({ hasText: 'local (admin)' }).waitFor();
    expect(page.url()).toBe(`${url}/#/overview`);
    expect(await page.evaluate(() => location.href + history.length)).not.toContain(localToken!);
    // Kept for this tab only, as a typed token is.
    expect(await page.evaluate(() => sessionStorage.getItem('organism.dashboard.token'))).toBe(localToken);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    // A mangled or wrong link is dropped from the address bar too; the form asks for a token.
    for (const bad of ['%E0%A4%A', 'f'.repeat(64)]) {
      const fresh = await context.newPage();
      fresh.on('pageerror', (e) => pageErrors.push(e.message));
      await fresh.goto(`${url}/#token=${bad}`);
      await fresh.getByLabel('API token').waitFor();
      expect(fresh.url()).toBe(`${url}/#/overview`);
      await fresh.close();
    }
    await context.close();
  }, 30_000);

  it('the token is never in a URL, a request line or the log; the page raised no error', () => {
    expect(requested.length).toBeGreaterThan(10);
    for (const token of TOKENS) {
      // As sent in the stream's subprotocol, too.
      for (const form of [token, Buffer.from(token).toString('base64url')]) {
        expect(requested.filter((u) => u.includes(form))).toEqual([]);
        expect(daemon.stdout()).not.toContain(form);
        expect(daemon.stderr()).not.toContain(form);
      }
    }
    expect(pageErrors).toEqual([]);
  });
});
