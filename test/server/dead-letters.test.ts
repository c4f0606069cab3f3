/**
 * GET /api/v1/dead-letters on a real daemon with the in-memory transport (the default): it never
 * redelivers, so it never dead-letters, and the list is empty; bad query parameters are refused.
 * The redis transport's dead letters are tested with real daemons in test/e2e/redis-recovery.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, daemonFetch, startDaemonProcess } from '../helpers/daemon.ts';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemonProcess(['--config', 'organism.yaml']);
});
afterAll(async () => {
  await daemon?.stop();
});

describe('GET /api/v1/dead-letters (memory transport)', { timeout: 30_000 }, () => {
  it('answers an empty page, whatever the page size', async () => {
    for (const query of ['', '?limit=1', '?limit=1000&cursor=1700000000000-0']) {
      const res = await daemonFetch(`${daemon.url}/api/v1/dead-letters${query}`);
      expect(res.status, query).toBe(200);
      expect(await res.json()).toEqual({ dead_letters: [], total: 0, next: null });
    }
  });

  it('refuses a bad limit or cursor with 400 and says what was wrong', async () => {
    const limit = await daemonFetch(`${daemon.url}/api/v1/dead-letters?limit=0`);
    expect(limit.status).toBe(400);
    expect(((await limit.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'request.query',
      message: expect.stringMatching(/limit must be a whole number 1..1000/),
    });
    const cursor = await daemonFetch(`${daemon.url}/api/v1/dead-letters?cursor=abc`);
    expect(cursor.status).toBe(400);
    expect(((await cursor.json()) as { error: { message: string } }).error.message).toMatch(
      /cursor must be the 'next' of a previous page/,
    );
  });
});
