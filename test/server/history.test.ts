/** Thread history: listings and the recent window in memory, and the segment log on disk. */
import { appendFile, mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type HistoryEntry, HistoryLog, ThreadHistory } from '../../src/bus/history/index.ts';
import { listMessages, listThreads } from '../../src/bus/queries.ts';

let clock = 1_000;
const entry = (from: string, to: string, payload = '<x/>'): HistoryEntry => ({
  id: `m${clock}`,
  from,
  to,
  kind: 'message',
  payload,
  time: clock++,
});
const tmp = () => mkdtemp(join(tmpdir(), 'organism-history-'));

describe('ThreadHistory', () => {
  it('lists threads newest activity first, filtered and paged', () => {
    const h = new ThreadHistory({ maxPerThread: 10, maxThreads: 100 });
    for (const id of ['a', 'b', 'c', 'd']) h.append(id, entry('api', id === 'c' ? 'printer' : 'greeter'));
    h.append('a', entry('greeter', 'printer')); // a is now the most recent
    h.markStopped('b');
    const status = (id: string, stopped: boolean) =>
      (stopped ? 'stopped' : id === 'd' ? 'active' : 'idle') as never;
    const all = listThreads(h, { limit: 2 }, status);
    expect(all.threads.map((t) => t.thread)).toEqual(['a', 'd']);
    expect(all.total).toBe(4);
    const rest = listThreads(h, { limit: 2, cursor: all.next! }, status);
    expect(rest.threads.map((t) => t.thread)).toEqual(['c', 'b']);
    expect(rest.next).toBeNull();
    expect(listThreads(h, { limit: 10, listener: 'printer' }, status).threads.map((t) => t.thread)).toEqual([
      'a',
      'c',
    ]);
    expect(listThreads(h, { limit: 10, status: 'stopped' }, status).threads.map((t) => t.thread)).toEqual([
      'b',
    ]);
    expect(listThreads(h, { limit: 10, status: 'active' }, status).threads.map((t) => t.thread)).toEqual([
      'd',
    ]);
    const since = h.summary('c')!.updated;
    expect(listThreads(h, { limit: 10, since }, status).threads.map((t) => t.thread)).toEqual([
      'a',
      'd',
      'c',
    ]);
  });

  it('keeps a bounded window of recent messages across threads, paged newest first', () => {
    const h = new ThreadHistory({ maxPerThread: 10, maxThreads: 100, maxRecent: 5 });
    for (let i = 0; i < 8; i++) h.append(i % 2 ? 'odd' : 'even', entry('api', `l${i}`));
    const first = listMessages(h, { limit: 2 });
    expect(first.messages.map((m) => m.to)).toEqual(['l7', 'l6']);
    const second = listMessages(h, { limit: 2, cursor: first.next! });
    expect(second.messages.map((m) => m.to)).toEqual(['l5', 'l4']);
    const third = listMessages(h, { limit: 2, cursor: second.next! });
    expect(third.messages.map((m) => m.to)).toEqual(['l3']); // the window holds 5
    expect(third.next).toBeNull();
    expect(listMessages(h, { limit: 10, thread: 'odd' }).messages.map((m) => m.to)).toEqual([
      'l7',
      'l5',
      'l3',
    ]);
    expect(listMessages(h, { limit: 10, listener: 'l4' }).messages).toHaveLength(1);
  });
});

describe('HistoryLog', () => {
  it('replays what it wrote into a new history, stopped threads included', async () => {
    const dir = await tmp();
    const log = await HistoryLog.open({ dir, maxBytes: 1024 * 1024 });
    const h = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
    log.attach(h);
    h.append('t1', entry('api', 'greeter', '<greeting><name>Ada "&" Bo</name></greeting>'));
    h.append('t1', entry('greeter', 'shouter', '<shout>\nline two ✓</shout>'));
    h.append('t2', entry('api', 'napper'));
    h.markStopped('t2');
    await log.close();

    const again = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
    const reopened = await HistoryLog.open({ dir, maxBytes: 1024 * 1024 });
    expect(await reopened.replay(again)).toEqual({ segments: 1, entries: 3, skipped: 0 });
    expect(again.messages('t1')).toEqual(h.messages('t1'));
    expect(again.messages('t2')?.stopped).toBe(true);
    expect(again.summary('t1')?.created).toBe(h.summary('t1')?.created);
    await reopened.close();
  });

  it('stays within max_bytes by deleting the oldest segments, and replays what is left', async () => {
    const dir = await tmp();
    const log = await HistoryLog.open({ dir, maxBytes: 64 * 1024, segmentBytes: 16 * 1024 });
    const h = new ThreadHistory({ maxPerThread: 1000, maxThreads: 10_000 });
    log.attach(h);
    const payload = `<p>${'x'.repeat(200)}</p>`;
    for (let i = 0; i < 2000; i++) {
      h.append(`t${i}`, entry('api', 'greeter', payload));
      if (i % 100 === 0) await log.flush();
    }
    await log.close();
    const names = (await readdir(dir)).sort();
    let bytes = 0;
    for (const name of names) bytes += (await stat(join(dir, name))).size;
    // At most max_bytes plus the segment being written.
    expect(bytes).toBeLessThanOrEqual(64 * 1024 + 16 * 1024 + 1024);
    expect(names.length).toBeGreaterThan(1);
    expect(names[0]).not.toBe('segment-00000001.jsonl');

    const again = new ThreadHistory({ maxPerThread: 1000, maxThreads: 10_000 });
    const report = await (await HistoryLog.open({ dir, maxBytes: 64 * 1024 })).replay(again);
    expect(report.entries).toBeGreaterThan(100);
    expect(report.entries).toBeLessThan(2000);
    expect(again.has('t1999')).toBe(true);
    expect(again.has('t0')).toBe(false);
  });

  it('skips a line cut short by a crash and keeps appending on a fresh line', async () => {
    const dir = await tmp();
    const log = await HistoryLog.open({ dir, maxBytes: 1024 * 1024 });
    const h = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
    log.attach(h);
    h.append('t1', entry('api', 'greeter'));
    await log.close();
    const [segment] = await readdir(dir);
    await appendFile(join(dir, segment!), '{"t":"t1","s":5,"i":"half'); // the crash

    const next = await HistoryLog.open({ dir, maxBytes: 1024 * 1024 });
    const h2 = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
    expect((await next.replay(h2)).skipped).toBe(1);
    next.attach(h2);
    h2.append('t1', entry('greeter', 'shouter'));
    await next.close();

    const h3 = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
    expect(await (await HistoryLog.open({ dir, maxBytes: 1024 * 1024 })).replay(h3)).toMatchObject({
      entries: 2,
      skipped: 1,
    });
    expect(h3.messages('t1')?.messages.map((m) => m.to)).toEqual(['greeter', 'shouter']);
  });

  it('keeps lines queued while the disk refuses, says so, and writes them when it can', async () => {
    const dir = await tmp();
    const errors: string[] = [];
    const log = await HistoryLog.open({
      dir: join(dir, 'file-not-dir'),
      maxBytes: 1024 * 1024,
      onError: (m) => errors.push(m),
    });
    // A file where the first segment's folder should be: every write fails.
    const { writeFile, rm, mkdir } = await import('node:fs/promises');
    await rm(join(dir, 'file-not-dir'), { recursive: true });
    await writeFile(join(dir, 'file-not-dir'), 'in the way');
    log.append('t1', entry('api', 'greeter'));
    await expect(log.flush()).rejects.toThrow(/cannot write the thread history/);
    expect(log.pending).toBe(1);
    expect(errors[0]).toMatch(/CANNOT WRITE THREAD HISTORY/);
    await rm(join(dir, 'file-not-dir'));
    await mkdir(join(dir, 'file-not-dir'));
    await log.flush();
    expect(log.pending).toBe(0);
    await log.close();
    const h = new ThreadHistory({ maxPerThread: 100, maxThreads: 100 });
    expect(
      (await (await HistoryLog.open({ dir: join(dir, 'file-not-dir'), maxBytes: 1024 * 1024 })).replay(h))
        .entries,
    ).toBe(1);
  });
});
