/**
 * A 202 is a promise (issue 15, items 1 and 2), with the real daemon on the memory transport:
 * accepted work is run after `kill -9` and a restart, and a webhook sent from a handler cut off by
 * the crash arrives once per call although the handler runs again.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { call, organismDir, startOn, until } from '../server/helpers.ts';

const SUPPORT = fileURLToPath(new URL('./durability-support/', import.meta.url));

const running: DaemonProcess[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const daemon of running.splice(0)) await daemon.stop('SIGKILL');
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function start(file: string, env: NodeJS.ProcessEnv): Promise<DaemonProcess> {
  const daemon = await startOn(file, env);
  running.push(daemon);
  return daemon;
}

async function killHard(daemon: DaemonProcess): Promise<void> {
  await daemon.stop('SIGKILL');
  running.splice(running.indexOf(daemon), 1);
}

const lines = async (path: string) =>
  (await readFile(path, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');

describe('memory transport: accepted work survives kill -9', () => {
  it('runs every one of 1,000 accepted messages across 100 threads after kill -9 and a restart', async () => {
    const { dir, file } = await organismDir(`organism:
  name: durability-test
server:
  inject_per_second: 100000
  inject_burst: 100000
listeners:
  - name: recorder
    handler: ${SUPPORT}recorder.ts
    queue_length: 2000
    max_concurrent: 8
`);
    const record = join(dir, 'handled.txt');
    await writeFile(record, '');
    // The first daemon takes 10 minutes per message: none finishes before the kill, however long
    // the 1,000 injections take (10 s was not enough in a full run at a load average of 18).
    const first = await start(file, { DURABILITY_RECORD: record, DURABILITY_SLEEP_MS: '600000' });
    const inject = async (payload: string, thread?: string) => {
      const res = await call(first.url, '/api/v1/inject', { body: { to: 'recorder', payload, thread } });
      expect(res.status).toBe(202);
      return res.json.thread as string;
    };
    const threads = await Promise.all(Array.from({ length: 100 }, () => inject('<job><n>0</n></job>')));
    for (let n = 1; n < 10; n++) {
      await Promise.all(threads.map((thread) => inject(`<job><n>${n}</n></job>`, thread)));
    }
    await killHard(first);
    expect(await lines(record)).toEqual([]);

    const second = await start(file, { DURABILITY_RECORD: record, DURABILITY_SLEEP_MS: '0' });
    const handled = await until(async () => {
      const got = await lines(record);
      return got.length >= 1000 ? got : undefined;
    }, 60_000);
    const expected = threads.flatMap((thread) => Array.from({ length: 10 }, (_, n) => `${thread} ${n}`));
    expect(new Set(handled)).toEqual(new Set(expected));
    // Nothing ran twice (none had finished before the kill), and each thread kept its order.
    expect(handled).toHaveLength(1000);
    for (const thread of threads) {
      expect(handled.filter((line) => line.startsWith(`${thread} `))).toEqual(
        Array.from({ length: 10 }, (_, n) => `${thread} ${n}`),
      );
    }
    expect(second.stdout()).toContain('journal: unfinished messages queued again');
    // New work is taken beside it.
    const fresh = await call(second.url, '/api/v1/inject', {
      body: { to: 'recorder', payload: '<job><n>77</n></job>' },
    });
    expect(fresh.status).toBe(202);
  }, 120_000);

  it('sends a webhook from a handler cut off by the crash once per call, though the handler runs again', async () => {
    const received: Array<{ n: number; key: string | undefined }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const key = req.headers['idempotency-key'];
        received.push({
          n: (JSON.parse(body) as { n: number }).n,
          key: typeof key === 'string' ? key : undefined,
        });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    servers.push(receiver);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const { dir, file } = await organismDir(`organism:
  name: durability-hooks
listeners:
  - name: hooker
    handler: ${SUPPORT}hooker.ts
    max_concurrent: 8
    tools: [webhook]
    tool_config:
      webhook:
        allow_loopback: true
`);
    const record = join(dir, 'record.txt');
    await writeFile(record, '');
    const env = { DURABILITY_RECORD: record, DURABILITY_HOOK_URL: hookUrl };
    const first = await start(file, { ...env, DURABILITY_SLEEP_MS: '600000' });
    for (let n = 0; n < 5; n++) {
      const res = await call(first.url, '/api/v1/inject', {
        body: { to: 'hooker', payload: `<hook-job><n>${n}</n></hook-job>` },
      });
      expect(res.status).toBe(202);
    }
    // Every handler has its webhook's answer and is now asleep: the crash cuts all five off. (The
    // receiver having the five requests is not enough: killed before the answer to the last was
    // recorded, the re-run finds that call in doubt, rightly, and answers EffectInDoubt.)
    await until(async () => (received.length >= 5 ? true : undefined), 20_000);
    await until(
      async () =>
        (await lines(record)).filter((line) => line.startsWith('called')).length >= 5 ? true : undefined,
      20_000,
    );
    await killHard(first);
    expect((await lines(record)).filter((line) => line.startsWith('done'))).toEqual([]);

    await start(file, { ...env, DURABILITY_SLEEP_MS: '0' });
    const done = await until(async () => {
      const got = (await lines(record)).filter((line) => line.startsWith('done'));
      return got.length >= 5 ? got : undefined;
    }, 30_000);
    // Each handler ran twice (at least once after the crash) ...
    const starts = (await lines(record)).filter((line) => line.startsWith('start'));
    for (let n = 0; n < 5; n++) expect(starts.filter((line) => line === `start ${n}`)).toHaveLength(2);
    // ... its repeated call was answered with the first call's result ...
    expect(done.sort()).toEqual([0, 1, 2, 3, 4].map((n) => `done ${n} 200`));
    // ... and the receiver got each webhook once, each with its own idempotency key.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received.map((r) => r.n).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(new Set(received.map((r) => r.key)).size).toBe(5);
  }, 120_000);
});
