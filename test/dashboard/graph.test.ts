/**
 * The overview draws the organism as a graph (issue 30), in chromium against the real daemon: every
 * listener and every peer edge of the default organism and of a 50-listener organism, with no two
 * labels (names, queue facts, edge rates) overlapping, checked from their rendered boxes; an edge's
 * rate rises while messages flow on it; a listener opens its page (grants, configuration, recent
 * threads). The first load, dagre included, stays under 200 KB compressed. Screenshots and the
 * figures go to test-results/dashboard/ (graph-*.png, graph-report.json).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, defaultOrganismCopy, startDaemonProcess, tokenFor } from '../helpers/daemon.ts';
import { call, LISTENERS, organismDir, startOn } from '../server/helpers.ts';
import { axeProblems } from './axe.ts';
import { ARTIFACTS, CHROMIUM_ARGS } from './support.ts';

interface Box {
  text: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Every label of the graph as drawn, and the pairs of them whose boxes intersect. */
async function overlappingLabels(page: Page): Promise<{ count: number; overlaps: string[] }> {
  const boxes: Box[] = await page.locator('[data-testid="organism-graph"]').evaluate((svg) =>
    [...svg.querySelectorAll('text')].map((t) => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent ?? '', x: r.x, y: r.y, width: r.width, height: r.height };
    }),
  );
  const overlaps: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i]!;
      const b = boxes[j]!;
      const x = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
      const y = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
      if (x > 0.5 && y > 0.5) overlaps.push(`"${a.text}" and "${b.text}"`);
    }
  return { count: boxes.length, overlaps };
}

/** A listener whose name and peer list say where it sits: 50 of them, each with two peers and a tool. */
function fiftyYaml(dir: string): string {
  const name = (i: number) => `worker_${String(i % 50).padStart(2, '0')}`;
  const listeners = Array.from(
    { length: 50 },
    (_, i) => `  - name: ${name(i)}
    handler: ${LISTENERS}printer.ts
    broadcast: true
    peers: [${name(i + 1)}, ${name(i + 7)}]
    tools: [${i % 2 ? 'calculate' : 'key_value_get'}]
`,
  ).join('');
  return `organism:\n  name: fifty\n  workspace: ${dir}/ws\nlisteners:\n${listeners}`;
}

describe('the organism graph', () => {
  let browser: Browser;
  const daemons: DaemonProcess[] = [];
  const report: Record<string, number> = {};
  const pageErrors: string[] = [];

  async function open(url: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // The daemons run without auth.tokens: the local token, as `organism dashboard` would give it.
    await page.goto(`${url}/#token=${tokenFor(url)}`);
    await page.getByTestId('who').waitFor();
    await page.locator('[data-testid="organism-graph"]').waitFor();
    return page;
  }

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    await mkdir(ARTIFACTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    if (Object.keys(report).length)
      await writeFile(join(ARTIFACTS, 'graph-report.json'), `${JSON.stringify(report, null, 2)}\n`);
    await browser?.close();
    for (const d of daemons) await d.stop('SIGKILL');
  });

  it('the default organism: every listener and peer edge, no overlapping labels, live rates, a listener opens its page', async () => {
    const daemon = await startDaemonProcess(['--config', defaultOrganismCopy()]);
    daemons.push(daemon);
    const url = daemon.url;
    const listeners = (await call(url, '/api/v1/listeners', { token: tokenFor(url) })).json
      .listeners as Array<{
      name: string;
      peers: string[];
    }>;
    expect(listeners.length).toBeGreaterThanOrEqual(5);
    const page = await open(url);
    for (const l of listeners) {
      expect(await page.locator(`[data-node="l:${l.name}"]`).count(), l.name).toBe(1);
      for (const p of l.peers) expect(await page.locator(`[data-edge="${l.name}->${p}"]`).count(), p).toBe(1);
    }
    // The toolbox's tools and the assistant's calculate are nodes too (one calculate for both).
    expect(await page.locator('[data-node="t:calculate"]').count()).toBe(1);
    const { count, overlaps } = await overlappingLabels(page);
    expect(count).toBeGreaterThan(2 * listeners.length);
    expect(overlaps).toEqual([]);

    // Messages flow greeter -> shouter -> printer: the edges' rates rise from 0.
    const edge = page.locator('[data-edge-label="greeter->shouter"] .edge-label');
    expect(await edge.textContent()).toBe('0.0/s');
    for (let i = 0; i < 5; i++) {
      const sent = await call(url, '/api/v1/inject', {
        token: tokenFor(url),
        body: { payload: `<greeting><name>Ada ${i}</name></greeting>`, to: 'greeter' },
      });
      expect(sent.status).toBe(202);
    }
    await expect.poll(() => edge.textContent(), { timeout: 10_000 }).not.toBe('0.0/s');
    await expect
      .poll(() => page.locator('[data-edge-label="shouter->printer"] .edge-label').textContent(), {
        timeout: 10_000,
      })
      .not.toBe('0.0/s');
    await page.screenshot({ path: join(ARTIFACTS, 'graph-default.png'), fullPage: true });
    expect((await axeProblems(page)).problems, 'overview with the graph').toEqual([]);

    // What a first load weighs now that dagre is in it (the page, modules and styles, gzip).
    const bytes = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .concat(performance.getEntriesByType('navigation'))
        .filter((e) => /\/dashboard\/|\/$/.test(new URL(e.name).pathname))
        .reduce((sum, e) => sum + (e as PerformanceResourceTiming).transferSize, 0),
    );
    report.first_load_bytes_with_graph = bytes;
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(200 * 1024);

    // A paused listener is marked on its node (and unmarked when resumed).
    const paused = await call(url, '/api/v1/listeners/printer/pause', { token: tokenFor(url), body: {} });
    expect(paused.status).toBe(200);
    const printer = page.locator('[data-node="l:printer"]');
    await page
      .locator('[data-node="l:printer"].paused')
      .filter({ hasText: 'paused' })
      .waitFor({ timeout: 10_000 });
    await call(url, '/api/v1/listeners/printer/resume', { token: tokenFor(url), body: {} });
    await expect.poll(() => printer.getAttribute('class'), { timeout: 10_000 }).not.toContain('paused');

    // A click opens the listener: its grants with their tool_config, configuration, recent threads.
    await page.locator('[data-node="l:toolbox"]').click();
    await page.waitForURL(/#\/listeners\/toolbox$/);
    await page.locator('h1').filter({ hasText: 'Listener toolbox' }).waitFor();
    await page.locator('tr[data-grant="run_command"]').filter({ hasText: 'allowed_commands' }).waitFor();
    expect(await page.locator('tr[data-grant]').count()).toBe(18);
    await page.goto(`${url}/#/listeners/greeter`);
    await page.locator('table[aria-label="Recent threads"] tr[data-thread]').first().waitFor();
    expect((await axeProblems(page)).problems, 'listener page').toEqual([]);
    await page.context().close();
  }, 90_000);

  it('a 50-listener organism: every listener and peer edge, no overlapping labels', async () => {
    const made = await organismDir('');
    await writeFile(made.file, fiftyYaml(made.dir));
    const daemon = await startOn(made.file);
    daemons.push(daemon);
    const page = await open(daemon.url);
    for (let i = 0; i < 50; i++) {
      const me = `worker_${String(i).padStart(2, '0')}`;
      expect(await page.locator(`[data-node="l:${me}"]`).count(), me).toBe(1);
      for (const peer of [i + 1, i + 7].map((n) => `worker_${String(n % 50).padStart(2, '0')}`))
        expect(await page.locator(`[data-edge="${me}->${peer}"]`).count(), `${me}->${peer}`).toBe(1);
    }
    const { count, overlaps } = await overlappingLabels(page);
    expect(count).toBeGreaterThan(200);
    expect(overlaps).toEqual([]);
    report.fifty_listener_labels = count;
    await page.screenshot({ path: join(ARTIFACTS, 'graph-fifty.png'), fullPage: true });
    await page.context().close();
  }, 90_000);

  it('the pages raised no error', () => {
    expect(pageErrors).toEqual([]);
  });
});
