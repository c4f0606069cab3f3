/**
 * The librarian backend contract: the same calls with the same inputs must give the same outputs
 * on every backend. embedded.test.ts runs it against the embedded store on disk, exist.test.ts
 * against the eXist backend talking to the fake eXist server. Expected values are written out in
 * full, so a backend that differs fails here rather than in an agent's hands.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LibrarianBackend } from '../../librarian/backend.ts';
import { OrganismError } from '../../src/errors.ts';

export interface ContractHarness {
  backend: LibrarianBackend;
  /** A second backend over the same store, as after a restart of the daemon. */
  reopen(): Promise<LibrarianBackend>;
  cleanup(): Promise<void>;
}

const C = '/db/organism';

async function failure(promise: Promise<unknown>): Promise<OrganismError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OrganismError);
    return error as OrganismError;
  }
  throw new Error('expected the call to fail');
}

export function backendContract(name: string, setup: () => Promise<ContractHarness>): void {
  describe(`librarian backend contract: ${name}`, () => {
    let h: ContractHarness;
    let b: LibrarianBackend;

    beforeEach(async () => {
      h = await setup();
      b = h.backend;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const q = (query: string, variables?: Record<string, never>, maxResults = 100) =>
      b.query(query, { collection: C, maxResults, ...(variables ? { variables } : {}) });

    it('stores and gets a document back unchanged', async () => {
      const content = '<note id="n1"><title>Budget &amp; plans</title><body>Q3 &lt;draft&gt;</body></note>';
      expect(await b.store(`${C}/notes/a.xml`, content)).toEqual({ path: `${C}/notes/a.xml` });
      expect(await b.get(`${C}/notes/a.xml`)).toEqual({ path: `${C}/notes/a.xml`, content });
    });

    it('gives a document back without its XML declaration, whitespace kept', async () => {
      await b.store(`${C}/decl.xml`, '<?xml version="1.0" encoding="UTF-8"?>\n<a>\n  <b x="1"/>\n</a>\n');
      expect((await b.get(`${C}/decl.xml`)).content).toBe('<a>\n  <b x="1"/>\n</a>');
    });

    it('replaces a document stored under the same path', async () => {
      await b.store(`${C}/a.xml`, '<v>1</v>');
      await b.store(`${C}/a.xml`, '<v>2</v>');
      expect((await b.get(`${C}/a.xml`)).content).toBe('<v>2</v>');
    });

    it('says "not found: <path>" for a missing document', async () => {
      const error = await failure(b.get(`${C}/missing.xml`));
      expect(error.code).toBe('librarian.not_found');
      expect(error.message).toBe(`not found: ${C}/missing.xml`);
    });

    it('refuses malformed XML with its line and column, and stores nothing', async () => {
      const error = await failure(b.store(`${C}/bad.xml`, '<a>\n  <b></c>\n</a>'));
      expect(error.code).toBe('xml.malformed');
      expect(error.details).toEqual({ line: 2, column: 6 });
      expect(error.message).toContain('line 2, column 6');
      expect((await failure(b.get(`${C}/bad.xml`))).code).toBe('librarian.not_found');
    });

    it('refuses a DOCTYPE before parsing it', async () => {
      const error = await failure(
        b.store(`${C}/x.xml`, '<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>'),
      );
      expect(error.code).toBe('xml.doctype');
      expect(error.details).toEqual({ line: 2, column: 1 });
    });

    it('lists sub-collections and documents by name', async () => {
      await b.store(`${C}/notes/b.xml`, '<n/>');
      await b.store(`${C}/notes/a.xml`, '<n/>');
      await b.store(`${C}/notes/2024/x.xml`, '<n/>');
      await b.store(`${C}/notes/my notes.xml`, '<n/>');
      expect(await b.list(`${C}/notes`)).toEqual({
        collection: `${C}/notes`,
        collections: [{ name: '2024', path: `${C}/notes/2024` }],
        documents: [
          { name: 'a.xml', path: `${C}/notes/a.xml` },
          { name: 'b.xml', path: `${C}/notes/b.xml` },
          { name: 'my notes.xml', path: `${C}/notes/my notes.xml` },
        ],
      });
      expect((await failure(b.list(`${C}/nothing`))).code).toBe('librarian.not_found');
      expect((await failure(b.list(`${C}/notes/a.xml`))).code).toBe('librarian.invalid_argument');
      expect((await failure(b.get(`${C}/notes`))).code).toBe('librarian.invalid_argument');
    });

    it('lists the default collection of a fresh store', async () => {
      expect(await b.list(C)).toEqual({ collection: C, collections: [], documents: [] });
    });

    it('deletes documents, and collections only when asked to recursively', async () => {
      await b.store(`${C}/notes/a.xml`, '<n/>');
      await b.store(`${C}/notes/sub/b.xml`, '<n/>');
      expect(await b.delete(`${C}/notes/a.xml`)).toEqual({ path: `${C}/notes/a.xml`, deleted: 'document' });
      expect((await failure(b.get(`${C}/notes/a.xml`))).code).toBe('librarian.not_found');
      expect((await failure(b.delete(`${C}/notes/a.xml`))).code).toBe('librarian.not_found');
      const refused = await failure(b.delete(`${C}/notes`));
      expect(refused.code).toBe('librarian.invalid_argument');
      expect(refused.message).toContain('recursive: true');
      expect((await b.get(`${C}/notes/sub/b.xml`)).content).toBe('<n/>');
      expect(await b.delete(`${C}/notes`, { recursive: true })).toEqual({
        path: `${C}/notes`,
        deleted: 'collection',
      });
      expect((await b.list(C)).collections).toEqual([]);
      expect((await failure(b.get(`${C}/notes/sub/b.xml`))).code).toBe('librarian.not_found');
    });

    describe('query', () => {
      beforeEach(async () => {
        await b.store(
          `${C}/notes/a.xml`,
          '<note id="1" lang="en"><title>Red wine</title><author>Ada</author></note>',
        );
        await b.store(
          `${C}/notes/b.xml`,
          '<note id="2" lang="fr"><title>Vin blanc</title><author>Blaise</author></note>',
        );
        await b.store(
          `${C}/notes/sub/c.xml`,
          '<note id="3" lang="en"><title>Green tea</title><author>Ada</author></note>',
        );
      });

      it('binds external variables as values and returns fragments in order', async () => {
        const result = await q(
          'declare variable $who external; for $n in collection("/db/organism/notes")//note[author = $who] order by $n/@id return $n/title',
          { who: 'Ada' } as never,
        );
        expect(result).toEqual({ hits: 2, results: ['<title>Red wine</title>', '<title>Green tea</title>'] });
      });

      it('types variables: integers, doubles, booleans, and arrays as sequences', async () => {
        const result = await q(
          'declare variable $n external; declare variable $x external; declare variable $yes external; declare variable $ids external; ' +
            '($n + 1, $n instance of xs:integer, $x * 2, $yes, count($ids), string-join($ids, ","))',
          { n: 2, x: 1.25, yes: true, ids: ['1', '3'] } as never,
        );
        expect(result).toEqual({ hits: 6, results: ['3', 'true', '2.5', 'true', '2', '1,3'] });
      });

      it('binds an empty array as the empty sequence', async () => {
        // BaseX took it for one empty untyped value: count 1, and "" where a number was declared.
        expect(
          await q('declare variable $none external; (count($none), empty($none))', { none: [] } as never),
        ).toEqual({ hits: 2, results: ['0', 'true'] });
      });

      it('gives attributes, text and atomic values as strings, documents and elements as XML', async () => {
        const result = await q(
          'let $d := doc("/db/organism/notes/b.xml") return ($d/note/@lang, $d//title/text(), document-uri($d), count(collection("/db/organism")//note), $d, <made n="{1 + 1}"/>)',
        );
        expect(result).toEqual({
          hits: 6,
          results: [
            'fr',
            'Vin blanc',
            '/db/organism/notes/b.xml',
            '3',
            '<note id="2" lang="fr"><title>Vin blanc</title><author>Blaise</author></note>',
            '<made n="2"/>',
          ],
        });
      });

      it('returns at most maxResults items and counts them all in hits', async () => {
        expect(await q('1 to 25', undefined, 3)).toEqual({ hits: 25, results: ['1', '2', '3'] });
        expect(await q('()', undefined, 3)).toEqual({ hits: 0, results: [] });
      });

      it('carries characters XML escapes, and line breaks, through variables intact', async () => {
        const value = 'a < b && c > "d" \'e\'\r\nf';
        expect(
          await q('declare variable $v external; ($v, string-length($v))', { v: value } as never),
        ).toEqual({
          hits: 2,
          results: [value, String(value.length)],
        });
      });

      it('reports a syntax error with its line and column', async () => {
        const error = await failure(
          q('for $n in collection("/db/organism")//note\nreturn $n/title[', undefined),
        );
        expect(error.code).toBe('librarian.query');
        expect(error.details?.line).toBe(2);
        expect(typeof error.details?.column).toBe('number');
        expect(error.message).toMatch(/^XQuery error at line 2, column \d+ /);
      });

      it('reports a dynamic error with its XQuery error code', async () => {
        const error = await failure(q('1 + "a"'));
        expect(error.code).toBe('librarian.query');
        expect(error.details?.xquery_code).toBe('XPTY0004');
      });

      it('keeps an injection attempt in a variable value inert', async () => {
        const attack = '"]; xmldb:remove("/db"); ["';
        const found = await q(
          'declare variable $who external; collection("/db/organism")//note[author = $who]',
          {
            who: attack,
          } as never,
        );
        expect(found).toEqual({ hits: 0, results: [] });
        expect(await q('declare variable $who external; $who', { who: attack } as never)).toEqual({
          hits: 1,
          results: [attack],
        });
        const attack2 = "') or true() or ('";
        expect(
          await q('declare variable $id external; collection("/db/organism")//note[@id = $id]', {
            id: attack2,
          } as never),
        ).toEqual({
          hits: 0,
          results: [],
        });
        expect((await b.list(`${C}/notes`)).documents.map((d) => d.name)).toEqual(['a.xml', 'b.xml']);
        expect((await b.get(`${C}/notes/a.xml`)).content).toContain('Red wine');
      });
    });

    describe('search', () => {
      beforeEach(async () => {
        await b.store(
          `${C}/notes/a.xml`,
          '<note><title>Red wine</title><body>A red wine from the south, red as blood, with red fruit.</body></note>',
        );
        await b.store(
          `${C}/notes/b.xml`,
          '<note><title>Apples</title><body>One red apple among many green apples and pears in the basket today.</body></note>',
        );
        await b.store(
          `${C}/notes/c.xml`,
          '<note><title>Tea</title><body>Green tea, steeped for three minutes.</body></note>',
        );
        await b.store(`${C}/other/d.xml`, '<note><title>Red door</title><body>The red door.</body></note>');
      });

      it('ranks documents by relevance with the hit marked in the snippet', async () => {
        const result = await b.search('red', { collection: `${C}/notes`, limit: 10 });
        expect(result.fallback).toBeUndefined();
        expect(result.results.map((r) => r.path)).toEqual([`${C}/notes/a.xml`, `${C}/notes/b.xml`]);
        expect(result.results[0]!.score).toBeGreaterThan(result.results[1]!.score);
        expect(result.results[0]!.snippet).toBe('<mark>Red</mark> wine A red wine from the south, red as...');
        expect(result.results[1]!.snippet).toBe(
          'Apples One <mark>red</mark> apple among many green apples and pears...',
        );
      });

      it('ranks a document with more of the words higher, and searches sub-collections', async () => {
        const result = await b.search('green tea', { collection: C, limit: 10 });
        expect(result.results.map((r) => r.path)).toEqual([`${C}/notes/c.xml`, `${C}/notes/b.xml`]);
        expect(result.results[0]!.snippet).toBe('<mark>Tea</mark> Green tea, steeped for three minutes.');
      });

      it('limits the number of results and finds nothing for an absent word', async () => {
        expect((await b.search('red', { collection: C, limit: 1 })).results.map((r) => r.path)).toEqual([
          `${C}/notes/a.xml`,
        ]);
        expect((await b.search('zebra', { collection: C, limit: 10 })).results).toEqual([]);
      });

      it('refuses a query of stop words only', async () => {
        expect((await failure(b.search('the of and', { collection: C, limit: 10 }))).code).toBe(
          'librarian.invalid_argument',
        );
      });
    });

    it('keeps documents and search across a restart', async () => {
      await b.store(`${C}/keep.xml`, '<note><body>persistent memory</body></note>');
      const again = await h.reopen();
      expect((await again.get(`${C}/keep.xml`)).content).toBe('<note><body>persistent memory</body></note>');
      expect((await again.search('memory', { collection: C, limit: 5 })).results.map((r) => r.path)).toEqual([
        `${C}/keep.xml`,
      ]);
      expect(
        await again.query('count(collection("/db/organism")//note)', { collection: C, maxResults: 1 }),
      ).toEqual({
        hits: 1,
        results: ['1'],
      });
    });
  });
}
