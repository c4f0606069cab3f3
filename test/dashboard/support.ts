/**
 * The organism the browser test runs (a scripted agent whose run_command waits for approval, a
 * listener that sends many messages, one that always fails) and the browser's settings.
 */
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { AUTH_YAML, LISTENERS } from '../server/helpers.ts';

export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
export const ARTIFACTS = fileURLToPath(new URL('../../test-results/dashboard/', import.meta.url));

/** The agent asks to run the command in its task; run_command waits for a person's approval. */
export const SCRIPT = `name: runner-script
scripts:
  - when: 'run: (?<cmd>.+)'
    turns:
      - text: Running it.
        tool_calls:
          - name: run_command
            args: { command: "{{match.cmd}}" }
      - text: "It ran: {{result.stdout}}"
        on_error:
          text: "I could not run it, {{result.error.code}}: {{result.error.message}}"
  - turns:
      - text: "Hello from the runner: {{task}}"
`;

export function organismYaml(dir: string): string {
  return `organism:
  name: dashboard-test
  workspace: ${dir}/ws
${AUTH_YAML}limits:
  max_thread_hops: 5000
listeners:
  - name: burst
    handler: ${FIXTURES}burst.ts
    peers: [printer]
  - name: printer
    handler: ${LISTENERS}printer.ts
  - name: broken
    handler: ${FIXTURES}broken.ts
  - name: runner
    agent: true
    description: Runs the shell command it is given, once a person approves it.
    prompt: Run the command you are given.
    tools: [run_command]
    trust: high
    max_turns: 4
    timeout_ms: 900000
    tool_config:
      run_command: { shell: true, approval: always }
llm:
  backends:
    - { provider: scripted, script: ${dir}/runner.script.yaml }
`;
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Buttons and forms that act on the organism (none of them may show for a viewer). */
export const ACTION_CONTROLS =
  'button.approve, button.deny, button.danger, form.inject, button:text-matches("^(Pause|Resume|Approve|Deny|Kill thread|Inject)$")';

/**
 * A screenshot of the whole page. The thread view lays out entries only once they are on screen
 * (content-visibility), and a full-page capture does not wait for that: the viewport is made as
 * tall as the page first, and the capture waits two frames for the entries to be drawn.
 */
export async function wholePage(page: Page, path: string): Promise<void> {
  const before = page.viewportSize();
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: before?.width ?? 1280, height });
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  await page.screenshot({ path });
  if (before) await page.setViewportSize(before);
}

/** A fresh browser context signed in with `token`; page errors go to `errors`. */
export async function signIn(
  browser: Browser,
  url: string,
  token: string,
  errors: string[],
  viewport = { width: 1280, height: 900 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor();
  return { context, page };
}
