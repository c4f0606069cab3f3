/**
 * A listener's promise that rejects with nobody awaiting it (a handler's fire-and-forget work) must
 * not stop the daemon: Node's default for an unhandled rejection is to exit, which took every
 * thread in flight down with one listener's bug and printed its error, secrets and all, to stderr.
 * The daemon logs it (redacted), counts it in /metrics, and goes on serving. An exception thrown
 * outside any promise still ends the process (its state is not known to be sound), but through
 * the redacting logger, not Node's raw print.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { ADMIN_TOKEN, AUTH_YAML, call, organismDir, startOn, TOKENS_ENV, until } from '../server/helpers.ts';

const FLOATER = fileURLToPath(new URL('./failure-support/floater.ts', import.meta.url));
const TIMEBOMB = fileURLToPath(new URL('./failure-support/timebomb.ts', import.meta.url));

const YAML = `organism:
  name: floats
${AUTH_YAML}listeners:
  - name: floater
    handler: ${FLOATER}
  - name: timebomb
    handler: ${TIMEBOMB}
`;

let daemon: DaemonProcess;
beforeAll(async () => {
  const { file } = await organismDir(YAML);
  daemon = await startOn(file, TOKENS_ENV);
});
afterAll(async () => {
  await daemon?.stop();
});

const inject = (text: string, to = 'floater', tag = 'float') =>
  call(daemon.url, '/api/v1/inject', {
    token: ADMIN_TOKEN,
    body: { to, payload: `<${tag}><text>${text}</text></${tag}>` },
  });

it('logs a rejection nobody handles, redacted, counts it, and keeps serving', async () => {
  expect((await inject('ledger-1')).status).toBe(202);
  await until(() => daemon.stdout().includes('sync of ledger-1 failed') || undefined).catch(
    (error: Error) => {
      throw new Error(`${error.message}; the daemon's stderr: ${daemon.stderr().slice(0, 400)}`);
    },
  );
  // Still serving: the next message is accepted and its rejection logged too.
  expect((await inject('ledger-2')).status).toBe(202);
  await until(() => daemon.stdout().includes('sync of ledger-2 failed') || undefined);
  const line = daemon
    .stdout()
    .split('\n')
    .find((l) => l.includes('sync of ledger-1 failed'))!;
  expect(JSON.parse(line)).toMatchObject({ level: 50, msg: expect.stringContaining('unhandled rejection') });
  expect(daemon.stdout()).not.toContain(ADMIN_TOKEN);
  expect(daemon.stderr()).toBe('');
  const metrics = await fetch(`${daemon.url}/metrics`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(await metrics.text()).toMatch(/^organism_unhandled_rejections_total 2$/m);
  expect((await fetch(`${daemon.url}/healthz`)).status).toBe(200);
}, 60_000);

it('ends on an exception thrown outside any promise, logged through the redacting logger', async () => {
  const exited = new Promise<number | null>((resolve) => daemon.child.once('exit', (code) => resolve(code)));
  expect((await inject('ledger-3', 'timebomb', 'tick')).status).toBe(202);
  expect(await exited).toBe(1);
  const line = daemon
    .stdout()
    .split('\n')
    .find((l) => l.includes('timer of ledger-3 broke'));
  expect(line).toBeDefined();
  expect(JSON.parse(line!)).toMatchObject({ level: 60, msg: expect.stringContaining('uncaught exception') });
  expect(daemon.stdout()).not.toContain(ADMIN_TOKEN);
  expect(daemon.stderr()).not.toContain(ADMIN_TOKEN);
}, 60_000);
