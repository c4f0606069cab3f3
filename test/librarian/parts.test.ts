/** The small parts both backends share: paths, variables, the query body, eXist's answers, text. */
import { describe, expect, it } from 'vitest';
import { accessPolicy } from '../../librarian/access.ts';
import { librarianUnavailable, resolveLibrarianOptions } from '../../librarian/config.ts';
import { buildQueryBody } from '../../librarian/exist/query-body.ts';
import { parseCollectionListing, parseException, parseExistResult } from '../../librarian/exist/result.ts';
import { normalizeAbsolute, resolvePath } from '../../librarian/paths.ts';
import { InvertedIndex } from '../../librarian/text/index.ts';
import { makeSnippet } from '../../librarian/text/snippet.ts';
import { queryTerms } from '../../librarian/text/tokenize.ts';
import { typeVariables } from '../../librarian/variables.ts';

const EXIST = 'http://exist.sourceforge.net/NS/exist';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as { code: string }).code;
  }
  return 'no error';
}

describe('paths', () => {
  it('resolves relative arguments against the default collection and keeps absolute ones', () => {
    expect(resolvePath('notes/a.xml', '/db/organism')).toBe('/db/organism/notes/a.xml');
    expect(resolvePath('/db/other/', '/db/organism')).toBe('/db/other');
  });

  it.each(['/etc/passwd', '/db/../etc', '/db/a//b', '/db/a?b', '/db/a#b', '/db/a%2e', '/db/a\\b', '/db/ a'])(
    'refuses %s',
    (path) => {
      expect(codeOf(() => normalizeAbsolute(path))).toBe('librarian.invalid_path');
    },
  );
});

describe('allowed_collections', () => {
  it('defaults to the default collection and below', () => {
    const p = accessPolicy(undefined, '/db/organism');
    expect(p.allowsCollection('/db/organism')).toBe(true);
    expect(p.allowsDocument('/db/organism/a/b.xml')).toBe(true);
    expect(p.allowsCollection('/db/organism2')).toBe(false);
    expect(p.allowsCollection('/db')).toBe(false);
  });

  it("allows a listed collection's own documents, and sub-collections only through a glob", () => {
    const p = accessPolicy(['/db/organism/notes'], '/db/organism');
    expect(p.allowsDocument('/db/organism/notes/a.xml')).toBe(true);
    expect(p.allowsDocument('/db/organism/notes/private/a.xml')).toBe(false);
    expect(codeOf(() => p.checkCollection('/db/organism'))).toBe('librarian.denied');
  });
});

describe('variables', () => {
  it('types values for eXist and fontoxpath alike', () => {
    expect(typeVariables({ s: 'x', i: 3, d: 1.5, b: false, ids: [1, 2.5] })).toEqual([
      { name: 's', type: 'xs:string', values: ['x'], lexical: ['x'] },
      { name: 'i', type: 'xs:integer', values: [3], lexical: ['3'] },
      { name: 'd', type: 'xs:double', values: [1.5], lexical: ['1.5'] },
      { name: 'b', type: 'xs:boolean', values: [false], lexical: ['false'] },
      { name: 'ids', type: 'xs:double', values: [1, 2.5], lexical: ['1', '2.5'] },
    ]);
  });

  it('refuses bad names, mixed types and objects', () => {
    expect(codeOf(() => typeVariables({ $x: 'a' }))).toBe('librarian.invalid_argument');
    expect(codeOf(() => typeVariables({ x: ['a', 1] as never }))).toBe('librarian.invalid_argument');
    expect(codeOf(() => typeVariables({ x: { a: 1 } as never }))).toBe('librarian.invalid_argument');
  });
});

describe('the eXist query body', () => {
  it('escapes values, keeps \\r, and refuses characters XML cannot carry', () => {
    const body = buildQueryBody('$v', { variables: { v: 'a<b&c\r\n' }, max: 5 });
    expect(body).toContain('<sx:value type="xs:string">a&lt;b&amp;c&#13;\n</sx:value>');
    expect(codeOf(() => buildQueryBody('$v', { variables: { v: 'nul\u0000' }, max: 5 }))).toBe(
      'librarian.invalid_argument',
    );
  });
});

describe("eXist's answers", () => {
  it('reads the typed exist:result wrapper', () => {
    const xml =
      `<exist:result xmlns:exist="${EXIST}" exist:hits="9" exist:start="1" exist:count="5">` +
      '<note id="1"><t>x</t></note>' +
      '<exist:value exist:type="xs:integer">42</exist:value>' +
      '<exist:attribute exist:local="id">1</exist:attribute>' +
      '<exist:text>hello &amp; bye</exist:text>' +
      '<exist:document exist:uri="/db/a.xml"><a/></exist:document>' +
      '</exist:result>';
    expect(parseExistResult(xml)).toEqual({
      hits: 9,
      start: 1,
      count: 5,
      items: ['<note id="1"><t>x</t></note>', '42', '1', 'hello & bye', '<a/>'],
    });
  });

  it('reads a collection listing with encoded names, and knows a document is not one', () => {
    const xml =
      `<exist:result xmlns:exist="${EXIST}"><exist:collection name="/db/o" owner="admin">` +
      '<exist:collection name="sub"/><exist:resource name="my%20note.xml"/><exist:resource name="a.xml"/>' +
      '</exist:collection></exist:result>';
    expect(parseCollectionListing(xml, '/db/o')).toEqual({
      collection: '/db/o',
      collections: [{ name: 'sub', path: '/db/o/sub' }],
      documents: [
        { name: 'a.xml', path: '/db/o/a.xml' },
        { name: 'my note.xml', path: '/db/o/my note.xml' },
      ],
    });
    expect(parseCollectionListing('<note/>', '/db/o/a.xml')).toBeNull();
  });

  it("reads the message of eXist's exception body", () => {
    expect(
      parseException(
        '<?xml version="1.0" ?><exception><path>/db</path><message>err:XPST0003 bad [at line 1, column 3]</message></exception>',
      ),
    ).toBe('err:XPST0003 bad [at line 1, column 3]');
    expect(parseException('<html>oops</html>')).toBeNull();
  });
});

describe('text: terms, ranking, snippets', () => {
  it('lower-cases words and drops stop words', () => {
    expect(queryTerms('The Budget, and the BUDGET of 2024!')).toEqual(['budget', '2024']);
  });

  it('ranks by BM25: more occurrences and rarer words score higher', () => {
    const index = new InvertedIndex();
    index.set('/a', 'red red red wine');
    index.set('/b', 'red apple');
    index.set('/c', 'green tea');
    expect(index.search(['red']).map((s) => s.path)).toEqual(['/a', '/b']);
    expect(index.search(['red', 'tea'])[0]!.path).toBe('/c');
    index.remove('/a');
    expect(index.search(['red']).map((s) => s.path)).toEqual(['/b']);
  });

  it('marks the first hit and escapes the text around it', () => {
    expect(makeSnippet('Fish & chips <cheap> near the harbour', ['chips'])).toBe(
      'Fish &amp; <mark>chips</mark> &lt;cheap&gt; near the harbour',
    );
    expect(makeSnippet(`${'word '.repeat(20)}needle${' more'.repeat(20)}`, ['needle'], 10)).toBe(
      '...word word <mark>needle</mark> more more...',
    );
  });
});

describe('librarian options', () => {
  it('defaults to the embedded store in <data_dir>/librarian with /db/organism', () => {
    expect(resolveLibrarianOptions(undefined, '/data')).toEqual({
      backend: 'embedded',
      defaultCollection: '/db/organism',
      dataDir: '/data/librarian',
    });
  });

  it('says why an eXist backend cannot be used, without the password', () => {
    const exist = resolveLibrarianOptions(
      { backend: 'exist', url: 'http://localhost:8080/exist/rest/', user: 'u', password_env: 'PW' },
      '/d',
    );
    expect(exist.url).toBe('http://localhost:8080/exist/rest');
    expect(librarianUnavailable(exist, {})).toBe(
      'librarian.password_env names PW, which is not set in the environment',
    );
    expect(librarianUnavailable(exist, { PW: 'secret' })).toBeNull();
    expect(librarianUnavailable(resolveLibrarianOptions({ backend: 'exist' }, '/d'), {})).toBe(
      'librarian.backend is exist but librarian.url is not set',
    );
  });
});
