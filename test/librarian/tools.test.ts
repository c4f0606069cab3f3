/**
 * The six librarian tools as a user runs them: `organism tools call <tool> --as <listener>` through
 * the real tool runtime (grants, argument validation, tool_config), over the embedded store and
 * over the eXist backend talking to the fake eXist server.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { ToolResult } from '../../src/tools/types.ts';
import { type BasexServer, startBasex } from '../helpers/basex.ts';
import { type FakeExist, startFakeExist } from './fake-exist.ts';

const PACKAGE = resolve(import.meta.dirname, '../..');
const TOOLS = [
  'librarian_store',
  'librarian_get',
  'librarian_query',
  'librarian_search',
  'librarian_list',
  'librarian_delete',
];

interface Organism {
  dir: string;
  config: string;
  root: string;
}

/** An organism.yaml with listeners granted the librarian tools; a root holding only librarian/. */
async function organism(extraYaml = '', librarianYaml = ''): Promise<Organism> {
  const dir = await mkdtemp(join(tmpdir(), 'librarian-tools-'));
  const root = join(dir, 'pkg');
  await mkdir(root);
  // The tool loader reads root/librarian/tools; the links let those modules find src/ and packages.
  for (const name of ['librarian', 'src', 'node_modules'])
    await symlink(join(PACKAGE, name), join(root, name));
  const config = join(dir, 'organism.yaml');
  await writeFile(
    config,
    `organism:
  name: librarian-tools-test
  data_dir: ./data
  workspace: .
${librarianYaml}listeners:
  - name: archivist
    description: Keeps notes in the librarian.
    handler: ${join(PACKAGE, 'listeners/toolbox.ts')}
    tools: [${TOOLS.join(', ')}]
${extraYaml}`,
  );
  return { dir, config, root };
}

async function call(o: Organism, tool: string, args: unknown, as = 'archivist'): Promise<ToolResult> {
  const io = captureIo();
  await main(
    [
      'tools',
      'call',
      tool,
      '--as',
      as,
      '--args',
      JSON.stringify(args),
      '--config',
      o.config,
      '--root',
      o.root,
    ],
    io,
  );
  const out = io.stdout.join('\n');
  try {
    return JSON.parse(out) as ToolResult;
  } catch {
    throw new Error(`tools call ${tool} printed no result: ${out} ${io.stderr.join('\n')}`);
  }
}

/** The note both backends store, find, read and delete in the same way. */
const NOTE = { collection: 'notes', document_name: 'a.xml', content: '<note><title>Red wine</title></note>' };
const NOTE_PATH = '/db/organism/notes/a.xml';
/** What a search for "wine" finds once NOTE is stored. */
const NOTE_FOUND = {
  results: [{ path: NOTE_PATH, score: expect.any(Number), snippet: 'Red <mark>wine</mark>' }],
};

function ok(result: ToolResult): unknown {
  if (result.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  return result.value;
}

function code(result: ToolResult): string {
  if (result.status === 'ok') throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.error.code;
}

/**
 * The calls a server backend answers as the others do: store, get, a query with `attack` bound as
 * a variable (inert: no hits, nothing removed), search, list, delete. `stored`, where the test can
 * see the server's own copy, says whether notes/a.xml is there; it is checked along the way.
 */
async function sameCalls(o: Organism, attack: string, stored?: () => boolean): Promise<void> {
  expect(ok(await call(o, 'librarian_store', NOTE))).toEqual({ path: NOTE_PATH });
  if (stored) expect(stored()).toBe(true);
  expect(ok(await call(o, 'librarian_get', { path: 'notes/a.xml' }))).toEqual({
    path: '/db/organism/notes/a.xml',
    content: '<note><title>Red wine</title></note>',
  });
  expect(
    ok(
      await call(o, 'librarian_query', {
        query: 'declare variable $t external; collection("/db/organism")//note[title = $t]',
        variables: { t: attack },
      }),
    ),
  ).toEqual({ hits: 0, results: [] });
  if (stored) expect(stored()).toBe(true);
  expect(ok(await call(o, 'librarian_search', { query: 'wine' }))).toEqual(NOTE_FOUND);
  expect(ok(await call(o, 'librarian_list', { collection: 'notes' }))).toEqual({
    collection: '/db/organism/notes',
    collections: [],
    documents: [{ name: 'a.xml', path: '/db/organism/notes/a.xml' }],
  });
  expect(ok(await call(o, 'librarian_delete', { path: 'notes/a.xml' }))).toEqual({
    path: NOTE_PATH,
    deleted: 'document',
  });
  if (stored) expect(stored()).toBe(false);
}

describe('librarian tools on the embedded store', () => {
  let o: Organism;
  beforeAll(async () => {
    o = await organism(`    tool_config:
      librarian_get:
        allowed_collections: [/db/organism/public, /db/organism/public/**]
  - name: curator
    description: May run updating queries.
    handler: ${join(PACKAGE, 'listeners/toolbox.ts')}
    tools: [librarian_query]
    tool_config:
      librarian_query:
        allow_updates: true
`);
  });
  afterAll(async () => {
    await rm(o.dir, { recursive: true, force: true });
  });

  it('stores, lists, gets, queries, searches and deletes', async () => {
    expect(ok(await call(o, 'librarian_store', NOTE))).toEqual({ path: NOTE_PATH });
    expect(ok(await call(o, 'librarian_list', {}))).toEqual({
      collection: '/db/organism',
      collections: [{ name: 'notes', path: '/db/organism/notes' }],
      documents: [],
    });
    expect(
      ok(
        await call(o, 'librarian_query', {
          query: "declare variable $t external; collection('/db/organism')//note[title = $t]/title/string()",
          variables: { t: 'Red wine' },
        }),
      ),
    ).toEqual({ hits: 1, results: ['Red wine'] });
    expect(ok(await call(o, 'librarian_search', { query: 'wine', num_results: 5 }))).toEqual(NOTE_FOUND);
    expect(ok(await call(o, 'librarian_delete', { path: 'notes/a.xml' }))).toEqual({
      path: NOTE_PATH,
      deleted: 'document',
    });
    expect(ok(await call(o, 'librarian_list', { collection: 'notes' }))).toMatchObject({ documents: [] });
    expect(code(await call(o, 'librarian_delete', { path: 'notes/a.xml' }))).toBe('librarian.not_found');
  });

  it('keeps every path argument inside allowed_collections', async () => {
    expect(
      code(
        await call(o, 'librarian_store', {
          collection: '/db/system/config',
          document_name: 'x.xml',
          content: '<a/>',
        }),
      ),
    ).toBe('librarian.denied');
    expect(code(await call(o, 'librarian_list', { collection: '/db' }))).toBe('librarian.denied');
    expect(code(await call(o, 'librarian_query', { query: '1', collection: '/db/other' }))).toBe(
      'librarian.denied',
    );
    expect(code(await call(o, 'librarian_search', { query: 'x', collection: '/db' }))).toBe(
      'librarian.denied',
    );
    expect(code(await call(o, 'librarian_delete', { path: '/db/organism', recursive: true }))).toBe(
      'librarian.denied',
    );
    // librarian_get is narrowed to /db/organism/public for this listener.
    ok(await call(o, 'librarian_store', { collection: 'notes', document_name: 'b.xml', content: '<b/>' }));
    expect(code(await call(o, 'librarian_get', { path: 'notes/b.xml' }))).toBe('librarian.denied');
    // ..and not escaped with "..".
    expect(code(await call(o, 'librarian_get', { path: 'public/../notes/b.xml' }))).toBe(
      'librarian.invalid_path',
    );
  });

  it('refuses queries that write unless allow_updates is set, and says why on the embedded store', async () => {
    const refused = await call(o, 'librarian_query', { query: "xmldb:remove('/db/organism')" });
    expect(code(refused)).toBe('librarian.read_only');
    expect(refused.status !== 'ok' && refused.error.message).toContain('allow_updates: true');
    const curator = await call(o, 'librarian_query', { query: "xmldb:remove('/db/organism')" }, 'curator');
    expect(code(curator)).toBe('librarian.read_only');
    expect(curator.status !== 'ok' && curator.error.message).toContain(
      'embedded librarian runs read-only queries only',
    );
  });

  it('lets the runtime refuse bad arguments before the tool runs', async () => {
    expect(code(await call(o, 'librarian_query', { query: '1', variables: { 'bad name': 'x' } }))).toMatch(
      /invalid/i,
    );
    expect(code(await call(o, 'librarian_search', { query: 'x', num_results: 1000 }))).toMatch(/invalid/i);
  });
});

describe('librarian tools on eXist (fake server)', () => {
  let fake: FakeExist;
  let o: Organism;
  beforeAll(async () => {
    fake = await startFakeExist({ user: 'organism', password: 'pw-for-tests' });
    process.env.LIBRARIAN_TEST_EXIST_PASSWORD = 'pw-for-tests';
    o = await organism(
      '',
      `librarian:
  backend: exist
  url: ${fake.url}
  user: organism
  password_env: LIBRARIAN_TEST_EXIST_PASSWORD
`,
    );
  });
  afterAll(async () => {
    delete process.env.LIBRARIAN_TEST_EXIST_PASSWORD;
    await fake.close();
    await rm(o.dir, { recursive: true, force: true });
  });

  it('runs the same calls against eXist, with the injection attempt inert', async () => {
    await sameCalls(o, '"]; xmldb:remove("/db"); ["', () => fake.docs.has('/db/organism/notes/a.xml'));
  });
});

describe('librarian tools on BaseX (real basexserver)', () => {
  let server: BasexServer;
  let o: Organism;
  beforeAll(async () => {
    server = await startBasex();
    process.env.LIBRARIAN_TEST_BASEX_PASSWORD = server.password;
    o = await organism(
      '',
      `librarian:
  backend: basex
  url: basex://${server.host}:${server.port}
  user: ${server.user}
  password_env: LIBRARIAN_TEST_BASEX_PASSWORD
`,
    );
  }, 60_000);
  afterAll(async () => {
    delete process.env.LIBRARIAN_TEST_BASEX_PASSWORD;
    await server?.stop();
    if (o) await rm(o.dir, { recursive: true, force: true });
  });

  it('runs the same calls against BaseX, with the injection attempt inert', async () => {
    await sameCalls(o, '"]; db:drop("db"); ["');
  });

  it('says what is missing when the basex backend has no user', async () => {
    const bare = await organism('', `librarian:\n  backend: basex\n  url: basex://127.0.0.1\n`);
    try {
      const result = await call(bare, 'librarian_list', {});
      expect(result.status).not.toBe('ok');
      expect(JSON.stringify(result)).toContain(
        'librarian.backend is basex but librarian.user is not set (BaseX has no anonymous access)',
      );
    } finally {
      await rm(bare.dir, { recursive: true, force: true });
    }
  });
});
