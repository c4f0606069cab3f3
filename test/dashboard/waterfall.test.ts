/**
 * A thread as a waterfall and as a path (issue 30), in chromium against the real daemon: the
 * default organism's assistant (played by the scripted provider, no API key) answers an arithmetic
 * task; its thread view shows the hop, its model turns and its calculate call as bars in order of
 * time, each with a duration, the call nested under the hop; a bar opens its message; the route is
 * drawn on the organism graph; axe finds nothing serious or critical. A screenshot goes to
 * test-results/dashboard/waterfall.png.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, defaultOrganismCopy, startDaemonProcess, tokenFor } from '../helpers/daemon.ts';
import { call, until } from '../server/helpers.ts';
import { axeProblems } from './axe.ts';
import { ARTIFACTS, CHROMIUM_ARGS, wholePage } from './support.ts';

describe('the thread waterfall', () => {
  let browser: Browser;
  let daemon: DaemonProcess;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    [daemon, browser] = await Promise.all([
      startDaemonProcess(['--config', defaultOrganismCopy()]),
      chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS }),
    ]);
    await mkdir(ARTIFACTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop('SIGKILL');
  });

  it('an agent thread: its model turns and tool calls in order with durations; a bar opens its message; the route on the graph', async () => {
    const url = daemon.url;
    const token = tokenFor(url);
    const sent = await call(url, '/api/v1/inject', {
      token,
      body: { payload: '<assistant><task>What is (17 + 25) * 3?</task></assistant>', to: 'assistant' },
    });
    expect(sent.status).toBe(202);
    const thread = sent.json.thread as string;
    await until(async () => {
      const res = await call(url, `/api/v1/threads/${thread}`, { token });
      return res.json.status === 'idle' || undefined;
    }, 30_000);

    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${url}/#token=${token}`);
    await page.getByTestId('who').waitFor();
    await page.goto(`${url}/#/threads/${thread}`);
    await page.locator('li[data-bar="tool-call"]').first().waitFor();

    const rows = await page.locator('ol.bars > li').evaluateAll((items) =>
      items.map((li) => ({
        kind: li.getAttribute('data-bar'),
        name: li.querySelector('.bar-name')?.textContent ?? '',
        left: Number(li.querySelector('button.bar')?.getAttribute('data-left')),
        duration: li.querySelector('[data-testid="duration"]')?.textContent ?? '',
      })),
    );
    const kinds = rows.map((r) => r.kind);
    // The hop into the assistant first; then turn 1, its calculate call, turn 2 (tell_printer), ...
    expect(kinds[0]).toBe('hop');
    expect(rows[0]!.name).toBe('api → assistant');
    const turns = rows.filter((r) => r.kind === 'model-turn');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    const calc = rows.findIndex((r) => r.kind === 'tool-call' && r.name === 'assistant → calculate');
    expect(calc).toBeGreaterThan(kinds.indexOf('model-turn'));
    expect(kinds.indexOf('model-turn')).toBeGreaterThan(0);
    expect(kinds.slice(calc + 1)).toContain('model-turn');
    // In order of time, each with a duration.
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.left).toBeGreaterThanOrEqual(rows[i - 1]!.left);
    for (const r of rows) expect(r.duration, r.name).toMatch(/^\d+(\.\d)? m?s$/);
    // Nested: the turns and the call sit under the hop.
    expect(await page.locator('li[data-bar="tool-call"].d-1').count()).toBeGreaterThan(0);
    expect(await page.locator('li[data-bar="model-turn"].d-1').count()).toBe(turns.length);

    // A bar opens its message.
    await page.locator('li[data-bar="tool-call"] button.bar').first().click();
    const shown = page.getByTestId('waterfall-message');
    await shown.waitFor();
    expect(await shown.textContent()).toContain('17 + 25');

    // The route: the edges the thread took are marked on the graph.
    await page.locator('[data-edge="assistant->calculate"].on-route').waitFor();
    await page.locator('[data-edge="assistant->printer"].on-route').waitFor();
    expect(await page.locator('[data-edge="greeter->shouter"].on-route').count()).toBe(0);

    await wholePage(page, join(ARTIFACTS, 'waterfall.png'));
    expect((await axeProblems(page)).problems, 'thread view with waterfall').toEqual([]);
    await context.close();
  }, 90_000);

  it('the pages raised no error', () => {
    expect(pageErrors).toEqual([]);
  });
});
