/**
 * Every dashboard page has a documented address (the table in docs/guide/service.md's Dashboard
 * section), and each address survives a sign-in and a reload (issue 30): opened in a fresh tab, it
 * asks for a token, then shows the page the address names; a reload shows it again without asking.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { call, OPERATOR_TOKEN, organismDir, startOn, TOKENS_ENV, VIEWER_TOKEN } from '../server/helpers.ts';
import { CHROMIUM_ARGS, organismYaml, SCRIPT } from './support.ts';

const GUIDE = new URL('../../docs/guide/service.md', import.meta.url);

/** The `#/...` addresses of the guide's dashboard table, in its order. */
function documentedAddresses(): string[] {
  const text = readFileSync(GUIDE, 'utf8');
  const section = text.slice(
    text.indexOf('## Dashboard'),
    text.indexOf('\n## ', text.indexOf('## Dashboard') + 5),
  );
  return [...section.matchAll(/^\| `(#\/[^`]+)`/gm)].map((m) => m[1]!);
}

/** The heading each page shows. */
const HEADINGS: Record<string, string> = {
  overview: 'Overview',
  threads: 'Threads',
  'threads/<id>': 'Thread',
  approvals: 'Approvals',
  audit: 'Audit',
  'dead-letters': 'Dead letters',
  tools: 'Tools',
  'listeners/<name>': 'Listener runner',
};

describe('dashboard addresses', () => {
  let daemon: DaemonProcess;
  let browser: Browser;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const made = await organismDir('');
    writeFileSync(join(made.dir, 'runner.script.yaml'), SCRIPT);
    writeFileSync(made.file, organismYaml(made.dir));
    [daemon, browser] = await Promise.all([
      startOn(made.file, TOKENS_ENV),
      chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop('SIGKILL');
  });

  it('every page is in the guide, and each address survives a sign-in and a reload', async () => {
    const addresses = documentedAddresses();
    expect(addresses.map((a) => a.slice(2)).sort()).toEqual(Object.keys(HEADINGS).sort());
    const sent = await call(daemon.url, '/api/v1/inject', {
      token: OPERATOR_TOKEN,
      body: { payload: '<runner><task>say hi</task></runner>' },
    });
    const thread = sent.json.thread as string;
    for (const documented of addresses) {
      const address = documented.replace('<id>', thread).replace('<name>', 'runner');
      const heading = HEADINGS[documented.slice(2)]!;
      const context = await browser.newContext();
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(`${daemon.url}/${address}`);
      await page.getByLabel('API token').fill(VIEWER_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const h1 = page.locator('h1').filter({ hasText: new RegExp(`^${heading}(\\s|$)`) });
      await h1.waitFor({ timeout: 10_000 });
      expect(new URL(page.url()).hash, documented).toBe(address);
      await page.reload();
      await h1.waitFor({ timeout: 10_000 });
      expect(await page.getByLabel('API token').count(), `${documented}: no sign-in after a reload`).toBe(0);
      expect(new URL(page.url()).hash).toBe(address);
      await context.close();
    }
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
