/**
 * The embedded backend: the contract suite over a real store on disk in a temp dir, plus what only
 * the embedded store has (files, atomic writes, allowed_collections inside collection()/doc()).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedBackend } from '../../librarian/embedded/backend.ts';
import { backendContract } from './backend.contract.ts';

const C = '/db/organism';

backendContract('embedded', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'librarian-embedded-'));
  const opened: EmbeddedBackend[] = [];
  const open = async () => {
    const backend = await EmbeddedBackend.open({ dir, defaultCollection: C });
    opened.push(backend);
    return backend;
  };
  return {
    backend: await open(),
    reopen: open,
    async cleanup() {
      for (const b of opened) await b.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('embedded backend on disk', () => {
  let dir: string;
  let backend: EmbeddedBackend;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'librarian-embedded-'));
    backend = await EmbeddedBackend.open({ dir, defaultCollection: C });
  });
  afterEach(async () => {
    await backend.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps each document as a file with the content as given, and no temp files behind', async () => {
    const content = '<?xml version="1.0" encoding="UTF-8"?>\n<note>\n  <t>x</t>\n</note>\n';
    await backend.store(`${C}/notes/a.xml`, content);
    await backend.store(`${C}/notes/a.xml`, content);
    const folder = join(dir, 'db', 'organism', 'notes');
    expect(await readdir(folder)).toEqual(['a.xml']);
    expect(await readFile(join(folder, 'a.xml'), 'utf8')).toBe(content);
    // get serializes the stored document, as eXist does: no XML declaration.
    expect((await backend.get(`${C}/notes/a.xml`)).content).toBe('<note>\n  <t>x</t>\n</note>');
  });

  it('encodes names that would be hidden or special on disk and lists them back', async () => {
    await backend.store(`${C}/.hidden.xml`, '<a/>');
    await backend.store(`${C}/a*b.xml`, '<b/>');
    expect(await readdir(join(dir, 'db', 'organism'))).toEqual(['%2Ehidden.xml', 'a%2Ab.xml'].sort());
    expect((await backend.list(C)).documents.map((d) => d.name)).toEqual(['.hidden.xml', 'a*b.xml']);
  });

  it('sweeps temp files left by a crash and skips files that no longer parse', async () => {
    await backend.store(`${C}/good.xml`, '<ok>fine words</ok>');
    const folder = join(dir, 'db', 'organism');
    await writeFile(join(folder, '.abc123.tmp'), '<half');
    await writeFile(join(folder, 'broken.xml'), '<broken>');
    const again = await EmbeddedBackend.open({ dir, defaultCollection: C });
    expect(await readdir(folder)).toEqual(['broken.xml', 'good.xml']);
    expect((await again.get(`${C}/good.xml`)).content).toBe('<ok>fine words</ok>');
    expect((await again.search('fine', { collection: C, limit: 5 })).results.map((r) => r.path)).toEqual([
      `${C}/good.xml`,
    ]);
  });

  it('refuses to store a document where a collection is', async () => {
    await backend.store(`${C}/notes/a.xml`, '<a/>');
    await expect(backend.store(`${C}/notes`, '<a/>')).rejects.toMatchObject({ code: 'librarian.conflict' });
  });

  it('enforces canRead inside collection() and doc()', async () => {
    await backend.store(`${C}/a.xml`, '<a>open</a>');
    await backend.store('/db/secret/s.xml', '<s>secret</s>');
    const canRead = (p: string) => p === C || p.startsWith(`${C}/`);
    await expect(
      backend.query('doc("/db/secret/s.xml")', { collection: C, maxResults: 5, canRead }),
    ).rejects.toMatchObject({
      code: 'librarian.denied',
    });
    // collection('/db') still runs, but only readable documents are in it.
    expect(
      await backend.query('collection("/db")/*/string()', { collection: C, maxResults: 5, canRead }),
    ).toEqual({
      hits: 1,
      results: ['open'],
    });
    expect(await backend.query('collection("/db")/*/string()', { collection: C, maxResults: 5 })).toEqual({
      hits: 2,
      results: ['open', 'secret'],
    });
  });

  it('resolves relative doc() paths and collection() without argument against the query collection', async () => {
    await backend.store(`${C}/notes/a.xml`, '<a>one</a>');
    await backend.store(`${C}/notes/b.xml`, '<b>two</b>');
    await backend.store(`${C}/c.xml`, '<c>three</c>');
    expect(
      await backend.query('string(doc("a.xml")), count(collection())', {
        collection: `${C}/notes`,
        maxResults: 5,
      }),
    ).toEqual({
      hits: 2,
      results: ['one', '2'],
    });
  });

  it('gives maps and arrays in the results as JSON, as the basex backend does', async () => {
    expect(await backend.query('(map { "a": 1 }, [1, "x"])', { collection: C, maxResults: 5 })).toEqual({
      hits: 2,
      results: ['{"a":1}', '[1,"x"]'],
    });
  });

  it('stops a runaway query when its signal aborts, and answers the next queries', async () => {
    await backend.store(`${C}/a.xml`, '<a>still here</a>');
    const controller = new AbortController();
    const runaway = backend.query('count(for $i in 1 to 100000000000 return $i * 2)', {
      collection: C,
      maxResults: 1,
      signal: controller.signal,
    });
    // Queued behind the runaway on the same thread; it must be answered by the replacement thread.
    const behind = backend.query('string(doc("/db/organism/a.xml"))', { collection: C, maxResults: 1 });
    // The event loop is free while the query runs on its thread: this timer fires.
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort(new Error('timed out by the runtime'));
    await expect(runaway).rejects.toThrow('timed out by the runtime');
    expect(await behind).toEqual({ hits: 1, results: ['still here'] });
    await backend.store(`${C}/b.xml`, '<b>new</b>');
    expect(await backend.query('count(collection())', { collection: C, maxResults: 1 })).toEqual({
      hits: 1,
      results: ['2'],
    });
  });

  it('stops a query at its own time limit when nothing else does', async () => {
    const limited = await EmbeddedBackend.open({ dir, defaultCollection: C, maxQueryMs: 300 });
    try {
      await expect(
        limited.query('count(for $i in 1 to 100000000000 return $i)', { collection: C, maxResults: 1 }),
      ).rejects.toMatchObject({
        code: 'librarian.query',
        message: 'the query ran longer than 300 ms and was stopped',
      });
      expect(await limited.query('1 + 1', { collection: C, maxResults: 1 })).toEqual({
        hits: 1,
        results: ['2'],
      });
    } finally {
      await limited.close();
    }
  });
});
