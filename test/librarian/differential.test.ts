/**
 * The differential suite: every query of the corpus (corpus/queries.json, over the documents in
 * corpus/docs) runs through librarian_query on the embedded store and on a real BaseX server (the
 * reference: a complete XQuery 3.1 engine), and must answer as BaseX does, or be refused before it
 * runs as "unsupported: <feature>". One test per query, named by its id; the rules of comparison
 * (and what is normalized) are in corpus/compare.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Variables } from '../../librarian/backend.ts';
import { sharedLibrarian } from '../../librarian/service.ts';
import queryTool from '../../librarian/tools/query.ts';
import { OrganismError } from '../../src/errors.ts';
import { testConfig } from '../../src/testing/config.ts';
import { createToolServices } from '../../src/tools/services.ts';
import type { ToolRunContext, ToolServices } from '../../src/tools/types.ts';
import { type BasexServer, startBasex } from '../helpers/basex.ts';
import { type Answer, corpus, corpusDocuments, difference, UNSUPPORTED } from './corpus/compare.ts';

interface Side {
  services: ToolServices;
  dataDir: string;
  close(): Promise<void>;
}

let server: BasexServer;
let dir: string;
let embedded: Side;
let basex: Side;
const tally = { same: 0, refused: 0, differ: 0, knownWrong: 0 };

async function side(name: string, librarian: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<Side> {
  const home = join(dir, name);
  const config = testConfig({ organism: { data_dir: join(home, 'data') }, librarian } as never, {
    dir: home,
  });
  const { services, resources } = createToolServices(config, env);
  const backend = await sharedLibrarian(services, config.organism.data_dir);
  for (const [path, content] of corpusDocuments()) await backend.store(path, content);
  return {
    services,
    dataDir: config.organism.data_dir,
    close: async () => void (await resources.closeAll()),
  };
}

async function ask(s: Side, query: string, variables?: Variables): Promise<Answer> {
  const ctx = {
    signal: AbortSignal.timeout(60_000),
    listener: 'corpus',
    thread: 'differential',
    callId: randomUUID(),
    config: {},
    timeoutMs: 60_000,
    workspace: dir,
    dataDir: s.dataDir,
    services: s.services,
  } as ToolRunContext;
  try {
    const result = await queryTool.run(variables ? { query, variables } : { query }, ctx);
    return { ok: true, hits: result.hits, results: result.results };
  } catch (error) {
    if (!(error instanceof OrganismError)) throw error;
    const xqueryCode = error.details?.xquery_code;
    return {
      ok: false,
      code: error.code,
      message: error.message,
      ...(typeof xqueryCode === 'string' ? { xqueryCode } : {}),
    };
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'librarian-differential-'));
  server = await startBasex();
  const env = { ...process.env, LIBRARIAN_DIFF_BASEX_PASSWORD: server.password };
  embedded = await side('embedded', { backend: 'embedded' }, env);
  basex = await side(
    'basex',
    {
      backend: 'basex',
      url: `basex://${server.host}:${server.port}`,
      user: server.user,
      password_env: 'LIBRARIAN_DIFF_BASEX_PASSWORD',
    },
    env,
  );
}, 120_000);

afterAll(async () => {
  await embedded?.close();
  await basex?.close();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(
    `differential corpus: ${tally.same} same as BaseX, ${tally.refused} refused as unsupported, ` +
      `${tally.knownWrong} known wrong, ${tally.differ} different\n`,
  );
});

describe('librarian_query: embedded store vs BaseX', () => {
  const queries = corpus();

  it('has a corpus of at least 100 queries with unique ids', () => {
    expect(queries.length).toBeGreaterThanOrEqual(100);
    expect(new Set(queries.map((q) => q.id)).size).toBe(queries.length);
  });

  for (const entry of queries) {
    // A known wrong answer (listed in docs/guide/librarian.md) is expected to differ until fixed.
    const test = entry.known_wrong ? it.fails : it;
    test(`${entry.id} (${entry.kind})`, async () => {
      const [mine, reference] = [
        await ask(embedded, entry.query, entry.variables),
        await ask(basex, entry.query, entry.variables),
      ];
      const why = difference(entry, mine, reference);
      if (why === null) {
        if (!mine.ok && UNSUPPORTED.test(mine.message ?? '')) tally.refused++;
        else tally.same++;
        return;
      }
      if (entry.known_wrong) tally.knownWrong++;
      else tally.differ++;
      expect({ query: entry.query, embedded: mine, basex: reference, why }).toEqual({
        query: entry.query,
        embedded: reference,
        basex: reference,
        why: null,
      });
    });
  }
});
