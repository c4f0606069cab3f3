/**
 * The eXist backend: the contract suite against the fake eXist (fake-exist.ts, a local HTTP
 * server speaking eXist's REST API), plus what is eXist's own: the wire format of each request,
 * authentication, eXist's error bodies, the Lucene index set-up and the fallback without one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExistBackend } from '../../librarian/exist/backend.ts';
import { INDEX_XCONF } from '../../librarian/exist/index-config.ts';
import { OrganismError } from '../../src/errors.ts';
import { backendContract } from './backend.contract.ts';
import { type FakeExist, type FakeExistOptions, startFakeExist } from './fake-exist.ts';

const C = '/db/organism';
const env = { EXIST_PASSWORD: 's3cret-pw' };

function backendFor(fake: FakeExist, user = 'admin', passwordEnv = 'EXIST_PASSWORD'): ExistBackend {
  return new ExistBackend({ url: fake.url, user, passwordEnv, env, defaultCollection: C });
}

async function fakeServer(options: FakeExistOptions = {}): Promise<FakeExist> {
  return startFakeExist({ user: 'admin', password: env.EXIST_PASSWORD, ...options });
}

backendContract('exist (fake eXist REST server)', async () => {
  const fake = await fakeServer();
  const backends: ExistBackend[] = [];
  const open = async () => {
    const backend = backendFor(fake);
    backends.push(backend);
    await backend.start();
    return backend;
  };
  return {
    backend: await open(),
    reopen: open,
    async cleanup() {
      for (const b of backends) await b.close();
      await fake.close();
    },
  };
});

describe('eXist backend on the wire', () => {
  let fake: FakeExist;
  let backend: ExistBackend;

  beforeEach(async () => {
    fake = await fakeServer();
    backend = backendFor(fake);
    await backend.start();
  });
  afterEach(async () => {
    await backend.close();
    await fake.close();
  });

  it('creates the default collection and installs a Lucene index config for it at start', async () => {
    expect(fake.collections.has(C)).toBe(true);
    const put = fake.requests.find(
      (r) => r.method === 'PUT' && r.path.endsWith('/db/system/config/db/organism/collection.xconf'),
    );
    expect(put?.body).toBe(INDEX_XCONF);
    expect(put?.contentType).toBe('application/xml');
    expect(INDEX_XCONF).toContain('<text match="/*"/>');
    expect(fake.luceneIndexed(C)).toBe(true);
  });

  it('PUTs documents as application/xml with Basic auth, and GETs them with _indent=no', async () => {
    await backend.store(`${C}/my notes/a.xml`, '<a>x</a>');
    const put = fake.requests.at(-1)!;
    expect(put.method).toBe('PUT');
    expect(put.path).toBe('/exist/rest/db/organism/my%20notes/a.xml');
    expect(put.contentType).toBe('application/xml');
    expect(put.authorization).toBe(`Basic ${Buffer.from('admin:s3cret-pw').toString('base64')}`);
    expect(put.body).toBe('<a>x</a>');
    await backend.get(`${C}/my notes/a.xml`);
    expect(fake.requests.at(-1)!.query.get('_indent')).toBe('no');
  });

  it('never sends malformed XML', async () => {
    const before = fake.requests.length;
    await expect(backend.store(`${C}/bad.xml`, '<a><b></a>')).rejects.toMatchObject({
      code: 'xml.malformed',
    });
    expect(fake.requests.length).toBe(before);
  });

  it('POSTs the query in CDATA and variables as sx:value, never in the query text', async () => {
    const attack = '"]; xmldb:remove("/db"); ["';
    const query = 'declare variable $who external; collection("/db/organism")//note[author = $who] (: ]]> :)';
    await backend.query(query, { collection: C, variables: { who: attack }, maxResults: 7 });
    const post = fake.requests.at(-1)!;
    expect(post.method).toBe('POST');
    expect(post.path).toBe('/exist/rest/db/organism');
    expect(post.body).toContain(
      '<query xmlns="http://exist.sourceforge.net/NS/exist" start="1" max="7" typed="yes">',
    );
    expect(post.body).toContain(
      '<text><![CDATA[declare variable $who external; collection("/db/organism")//note[author = $who] (: ]]]]><![CDATA[> :)]]></text>',
    );
    expect(post.body).toContain(
      '<variable><qname><localname>who</localname></qname><sx:sequence xmlns:sx="http://exist-db.org/xquery/types/serialized">' +
        '<sx:value type="xs:string">"]; xmldb:remove("/db"); ["</sx:value></sx:sequence></variable>',
    );
    expect(post.body.split('xmldb:remove').length).toBe(2);
  });

  it('would really run an injected xmldb:remove, so the inert result above means something', async () => {
    await backend.store(`${C}/notes/a.xml`, '<note/>');
    // What a client that splices values into the query text would send:
    await backend.query('xmldb:remove("/db/organism/notes")', { collection: C, maxResults: 1 });
    expect(fake.collections.has(`${C}/notes`)).toBe(false);
  });

  it("reads eXist's 400 exception body into an error with the line and column", async () => {
    const error = await backend
      .query('let $x := 1\nreturn $x +', { collection: C, maxResults: 1 })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OrganismError);
    expect(error.code).toBe('librarian.query');
    expect(error.details).toMatchObject({ line: 2, status: 400, xquery_code: 'XPST0003' });
    expect(error.message).toMatch(
      /^XQuery error at line 2, column \d+ \(eXist-db answered 400\): err:XPST0003 /,
    );
  });

  it('turns a 401 into an authentication error naming the user, never the password', async () => {
    const wrong = new ExistBackend({
      url: fake.url,
      user: 'admin',
      passwordEnv: 'NOPE',
      env,
      defaultCollection: C,
    });
    const error = await wrong.get(`${C}/a.xml`).catch((e) => e);
    await wrong.close();
    expect(error.code).toBe('librarian.auth');
    expect(error.message).toContain('user "admin"');
    expect(error.message).toContain('401');
    expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain('s3cret');
  });

  it('says when the server cannot be reached', async () => {
    const url = fake.url;
    await fake.close();
    const gone = new ExistBackend({ url, defaultCollection: C });
    const error = await gone.list(C).catch((e) => e);
    await gone.close();
    expect(error.code).toBe('librarian.backend');
    expect(error.message).toContain(`cannot reach eXist-db at ${url}`);
    fake = await fakeServer();
  });
});

describe('eXist search without a Lucene index', () => {
  let fake: FakeExist;
  let backend: ExistBackend;

  afterEach(async () => {
    await backend.close();
    await fake.close();
  });

  const seed = async () => {
    await backend.store(`${C}/a.xml`, '<n><b>red wine, red grapes, red fruit</b></n>');
    await backend.store(`${C}/b.xml`, '<n><b>one red apple among green ones and more words here</b></n>');
    await backend.store(`${C}/c.xml`, '<n><b>green tea</b></n>');
  };

  it('falls back to contains() with a computed score when the config cannot be written, and says so', async () => {
    fake = await fakeServer({ configWritable: false });
    backend = backendFor(fake);
    await backend.start();
    await seed();
    const result = await backend.search('red', { collection: C, limit: 10 });
    expect(result.fallback).toMatch(
      /^no Lucene index \(could not install the Lucene index config at \/db\/system\/config\/db\/organism\/collection.xconf: .*403/,
    );
    expect(result.results.map((r) => r.path)).toEqual([`${C}/a.xml`, `${C}/b.xml`]);
    expect(result.results[0]!.score).toBeGreaterThan(result.results[1]!.score);
    expect(result.results[0]!.snippet).toBe('<mark>red</mark> wine, red grapes, red fruit');
    const post = fake.requests.at(-1)!;
    expect(post.body).toContain('contains($text, $t)');
  });

  it('leaves an existing collection.xconf without Lucene alone and explains what to add', async () => {
    fake = await fakeServer();
    fake.storeXml(
      '/db/system/config/db/organism/collection.xconf',
      '<collection xmlns="http://exist-db.org/collection-config/1.0"><index><range/></index></collection>',
    );
    backend = backendFor(fake);
    await backend.start();
    await seed();
    const result = await backend.search('green', { collection: C, limit: 10 });
    expect(result.fallback).toContain('has no Lucene <text> index');
    expect(result.fallback).toContain('<lucene><text match="/*"/></lucene>');
    expect(result.results.map((r) => r.path)).toEqual([`${C}/c.xml`, `${C}/b.xml`]);
    expect(fake.requests.some((r) => r.method === 'PUT' && r.path.endsWith('collection.xconf'))).toBe(false);
  });

  it('installs nothing for other collections, and uses the nearest collection.xconf above them', async () => {
    fake = await fakeServer();
    backend = backendFor(fake);
    await backend.start();
    await backend.store('/db/apps/wiki/pages/a.xml', '<p>green tea</p>');
    await backend.store('/db/other/b.xml', '<p>green tea</p>');
    fake.storeXml('/db/system/config/db/apps/collection.xconf', INDEX_XCONF);
    const covered = await backend.search('tea', { collection: '/db/apps/wiki', limit: 5 });
    expect(covered.fallback).toBeUndefined();
    expect(covered.results.map((r) => r.path)).toEqual(['/db/apps/wiki/pages/a.xml']);
    const uncovered = await backend.search('tea', { collection: '/db/other', limit: 5 });
    expect(uncovered.fallback).toContain('no collection.xconf with a Lucene index covers /db/other');
    expect(uncovered.results.map((r) => r.path)).toEqual(['/db/other/b.xml']);
    const puts = fake.requests
      .filter((r) => r.method === 'PUT' && r.path.endsWith('collection.xconf'))
      .map((r) => r.path);
    expect(puts).toEqual(['/exist/rest/db/system/config/db/organism/collection.xconf']);
  });
});
