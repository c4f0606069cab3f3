/**
 * The bus journal on its own: what a restart gets back (accepted and not handled, in order), a
 * line torn by a crash, the fsync modes' promises, and segments deleted once handled.
 */
import { appendFile, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../src/bus/journal/journal.ts';
import type { Message } from '../../src/bus/message.ts';

const dirOf = () => mkdtemp(join(tmpdir(), 'organism-journal-'));

function msg(id: string, thread = 't1', to = 'worker'): Message {
  return {
    id,
    thread,
    frame: `f-${id}`,
    from: 'api',
    to,
    tag: 'job',
    envelope: `<message><job>${id}</job></message>`,
    kind: 'message',
    hop: 1,
    time: 1_700_000_000_000,
  };
}

const frame = (id: string) => [
  [`f-${id}`, 'worker', 'api', null, 0] as [string, string, string, null, number],
];

const segments = new Map<string, number>();
/** accept() and handled() as the transport calls them: handled() with the segment accept() gave. */
function accept(journal: Journal, message: Message, scope: string[] | undefined): void {
  segments.set(message.id, journal.accept(message, frame(message.id), scope));
}
function handled(journal: Journal, id: string): void {
  journal.handled(id, journal.recoveredSegment(id) ?? segments.get(id)!);
}

async function segmentText(dir: string): Promise<string> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
  let text = '';
  for (const name of names) text += await readFile(join(dir, name), 'utf8');
  return text;
}

describe('bus journal', () => {
  it('gives back what was accepted and not handled, in journal order, with frames and scope', async () => {
    const dir = await dirOf();
    const first = await Journal.open({ dir });
    for (let i = 0; i < 6; i++)
      accept(first, msg(`m${i}`, i % 2 ? 'odd' : 'even'), i === 0 ? ['read'] : undefined);
    // Written before their marks (a mark in the same write as its record cancels both, below).
    await first.durable();
    handled(first, 'm1');
    handled(first, 'm4');
    await first.durable();
    await first.close();

    const second = await Journal.open({ dir });
    expect(second.report).toMatchObject({ accepted: 6, handled: 2, pending: 4, torn: 0, corrupt: 0 });
    const pending = second.takePending();
    expect(pending.map((p) => p.message.id)).toEqual(['m0', 'm2', 'm3', 'm5']);
    expect(pending.filter((p) => p.message.thread === 'even').map((p) => p.message.id)).toEqual(['m0', 'm2']);
    expect(pending[0]!.frames).toEqual(frame('m0'));
    expect(pending[0]!.scope).toEqual(['read']);
    expect(pending[1]!.scope).toBeUndefined();
    // Every id held at start, handled or not, is known: a re-run's outputs are not sent twice.
    expect(second.journaledBefore('m1')).toBe(true);
    expect(second.journaledBefore('m9')).toBe(false);
    expect(second.takePending()).toEqual([]);
    await second.close();
  });

  it('writes neither line for a message accepted and handled before its record was written', async () => {
    const dir = await dirOf();
    const journal = await Journal.open({ dir });
    accept(journal, msg('quick'), undefined);
    accept(journal, msg('slow'), undefined);
    handled(journal, 'quick');
    await journal.durable();
    const text = await segmentText(dir);
    expect(text).not.toContain('quick');
    expect(text).toContain('"id":"slow"');
    handled(journal, 'slow');
    await journal.durable();
    expect(await segmentText(dir)).toContain('{"h":["slow"]}');
    await journal.close();
    const again = await Journal.open({ dir });
    expect(again.report).toMatchObject({ accepted: 1, handled: 1, pending: 0 });
    await again.close();
  });

  it('tolerates and reports a last line torn by a crash, and keeps appending after it', async () => {
    const dir = await dirOf();
    const first = await Journal.open({ dir });
    accept(first, msg('a'), undefined);
    accept(first, msg('b'), undefined);
    await first.durable();
    await first.close();
    const [name] = (await readdir(dir)).filter((n) => n.endsWith('.jsonl'));
    // A crash mid-write: half of the next record, no newline.
    await appendFile(join(dir, name!), '{"a":{"id":"c","thread":"t1","fra');

    const second = await Journal.open({ dir });
    expect(second.report).toMatchObject({ accepted: 2, pending: 2, torn: 1, corrupt: 0 });
    expect(second.takePending().map((p) => p.message.id)).toEqual(['a', 'b']);
    handled(second, 'a');
    accept(second, msg('d'), undefined);
    await second.durable();
    await second.close();

    const third = await Journal.open({ dir });
    // The torn line is still there (it is never rewritten) and still skipped; nothing else lost.
    expect(third.report).toMatchObject({ torn: 0, corrupt: 1, pending: 2 });
    expect(third.takePending().map((p) => p.message.id)).toEqual(['b', 'd']);
    await third.close();
  });

  it('skips a line that does not parse in the middle, counts it, and reads on', async () => {
    const dir = await dirOf();
    const good = (id: string) => `{"a":${JSON.stringify(msg(id))},"f":[]}\n`;
    await writeFile(
      join(dir, `journal-${process.pid}-00000001.jsonl`),
      `${good('x')}not json\n${good('y')}{"h":["x"]}\n`,
    );
    const journal = await Journal.open({ dir });
    expect(journal.report).toMatchObject({ accepted: 2, handled: 1, pending: 1, corrupt: 1, torn: 0 });
    expect(journal.takePending().map((p) => p.message.id)).toEqual(['y']);
    await journal.close();
  });

  for (const fsync of ['always', 'batch'] as const) {
    it(`fsync ${fsync}: durable() resolves only after an fsync that covers the record`, async () => {
      const dir = await dirOf();
      const journal = await Journal.open({ dir, fsync });
      accept(journal, msg('w'), undefined);
      let resolved = false;
      const wait = journal.durable().then(() => {
        resolved = true;
      });
      expect(journal.syncs).toBe(0);
      expect(resolved).toBe(false);
      await wait;
      expect(journal.syncs).toBe(1);
      expect(journal.queued).toBe(0);
      expect(await segmentText(dir)).toContain('"id":"w"');
      await journal.close();
    });
  }

  it('fsync off: durable() does not wait for the disk; the record is written when the loop turns', async () => {
    const dir = await dirOf();
    const journal = await Journal.open({ dir, fsync: 'off' });
    accept(journal, msg('o'), undefined);
    await journal.durable();
    expect(journal.queued).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(journal.queued).toBe(0);
    expect(await segmentText(dir)).toContain('"id":"o"');
    expect(journal.syncs).toBe(0);
    await journal.close();
  });

  it('fsync batch: records appended together share one write and one fsync (group commit)', async () => {
    const dir = await dirOf();
    const journal = await Journal.open({ dir, fsync: 'batch' });
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      accept(journal, msg(`g${i}`), undefined);
      waits.push(journal.durable());
    }
    await Promise.all(waits);
    expect((await segmentText(dir)).split('\n').filter(Boolean)).toHaveLength(50);
    expect(journal.syncs).toBe(1);
    await journal.close();
  });

  it('fsync always: each waiting caller gets an fsync of its own; records nobody waits for ride along', async () => {
    const dir = await dirOf();
    const journal = await Journal.open({ dir, fsync: 'always' });
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      accept(journal, msg(`a${i}`), undefined);
      accept(journal, msg(`hop${i}`), undefined);
      waits.push(journal.durable());
    }
    await Promise.all(waits);
    expect(journal.syncs).toBe(20);
    expect((await segmentText(dir)).split('\n').filter(Boolean)).toHaveLength(40);
    await journal.close();
  });

  it('fsync off: never syncs', async () => {
    const dir = await dirOf();
    const journal = await Journal.open({ dir, fsync: 'off' });
    for (let i = 0; i < 20; i++) accept(journal, msg(`o${i}`), undefined);
    await journal.durable();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await segmentText(dir)).split('\n').filter(Boolean)).toHaveLength(20);
    expect(journal.syncs).toBe(0);
    await journal.close();
  });

  it('deletes the oldest segments once all they accepted is handled, and keeps the rest', async () => {
    const dir = await dirOf();
    const journal = await Journal.open({ dir, segmentBytes: 400 });
    for (let i = 0; i < 12; i++) accept(journal, msg(`s${i}`), undefined);
    await journal.durable();
    const before = (await readdir(dir)).filter((n) => n.endsWith('.jsonl'));
    expect(before.length).toBeGreaterThan(3);
    for (let i = 0; i < 11; i++) handled(journal, `s${i}`);
    await journal.durable();
    accept(journal, msg('last'), undefined);
    await journal.durable();
    await journal.close();
    const after = (await readdir(dir)).filter((n) => n.endsWith('.jsonl'));
    expect(after.length).toBeLessThan(before.length);
    const again = await Journal.open({ dir });
    expect(again.takePending().map((p) => p.message.id)).toEqual(['s11', 'last']);
    await again.close();
  });

  it('refuses durable() while the disk refuses, and writes everything once it can again', async () => {
    const dir = await dirOf();
    const errors: string[] = [];
    const journal = await Journal.open({ dir, retryMs: 50, onError: (m) => errors.push(m) });
    // A folder where the segment file should be: open() fails as a full or broken disk would.
    const { mkdir, rm } = await import('node:fs/promises');
    await mkdir(join(dir, `journal-${process.pid}-00000001.jsonl`));
    accept(journal, msg('e1'), undefined);
    await expect(journal.durable()).rejects.toMatchObject({ code: 'journal.io' });
    expect(errors.join('\n')).toContain('CANNOT WRITE THE BUS JOURNAL');
    await expect(journal.durable()).rejects.toMatchObject({ code: 'journal.io' });
    await rm(join(dir, `journal-${process.pid}-00000001.jsonl`), { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 150));
    accept(journal, msg('e2'), undefined);
    await journal.durable();
    await journal.close();
    const again = await Journal.open({ dir });
    expect(again.takePending().map((p) => p.message.id)).toEqual(['e1', 'e2']);
    await again.close();
  });

  it('takes over every segment, whatever process has the pid in its name now', async () => {
    const dir = await dirOf();
    const line = (id: string) => `{"a":${JSON.stringify(msg(id))},"f":[]}\n`;
    // Pids alive now (pid 1, the parent of this process) and one above any pid_max (2^22 + 1): the
    // pid in a name says nothing (the daemon holds its data dir's lock; pids are reused).
    await writeFile(join(dir, 'journal-1-00000001.jsonl'), line('init'));
    await writeFile(join(dir, `journal-${process.ppid}-00000002.jsonl`), line('parent'));
    await writeFile(join(dir, `journal-${2 ** 22 + 1}-00000003.jsonl`), line('orphan'));
    const journal = await Journal.open({ dir });
    expect(journal.report).toMatchObject({ segments: 3, accepted: 3, pending: 3 });
    expect(journal.takePending().map((p) => p.message.id)).toEqual(['init', 'parent', 'orphan']);
    for (const id of ['init', 'parent', 'orphan']) handled(journal, id);
    accept(journal, msg('mine'), undefined);
    await journal.durable();
    await journal.close();
    // Every segment taken over is deleted once what it accepted is handled; this run's goes after them.
    expect((await readdir(dir)).sort()).toEqual([`journal-${process.pid}-00000004.jsonl`]);
  });

  it('fsync off: once a write has failed, durable() refuses too', async () => {
    const dir = await dirOf();
    const journal = await Journal.open({ dir, fsync: 'off', retryMs: 60_000, onError: () => {} });
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, `journal-${process.pid}-00000001.jsonl`));
    accept(journal, msg('f1'), undefined);
    await journal.durable();
    await new Promise((resolve) => setImmediate(resolve));
    accept(journal, msg('f2'), undefined);
    await expect(journal.durable()).rejects.toMatchObject({ code: 'journal.io' });
    await journal.close();
  });
});
