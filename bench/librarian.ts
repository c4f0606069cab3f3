/**
 * A warm librarian_query on the embedded store over the differential corpus's documents
 * (test/librarian/corpus/docs: catalog with namespaces, orders, customers, tickets with mixed
 * content, an archive sub-collection), as an agent's repeated queries meet it: the backend open, the
 * query thread started, each query run once before timing.
 *
 * - librarian_query_warm_ms_p50: the median over the QUERIES below of each one's p50 (one call =
 *   the backend's query(): the pre-check, the worker round trip, evaluation, serialization).
 * - floor_fontoxpath_ms_p50: the same queries through fontoxpath.evaluateXPathToStrings on the same
 *   documents in this thread (the bare engine, no store, no worker, no check).
 * Target (issue 32): within 2x of the embedded figure before the changes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fontoxpath from 'fontoxpath';
import { parseXmlDocument } from 'slimdom';
import { EmbeddedBackend } from '../librarian/embedded/backend.ts';
import { corpusDocuments } from '../test/librarian/corpus/compare.ts';
import { percentile, round } from './support.ts';

const RUNS = 200;
const C = '/db/organism';
const NS = "declare namespace c = 'urn:x-shop:catalog'; declare namespace p = 'urn:x-shop:price'; ";

/** Queries both the old and the new embedded store answer; `$d` names the document each reads. */
const QUERIES: { doc: string; body: string }[] = [
  { doc: 'shop/catalog.xml', body: `${NS}$d/c:catalog/c:product[@category = 'tea']/c:name/string()` },
  {
    doc: 'shop/orders.xml',
    body: "for $o in $d//order where $o/@status = 'shipped' order by $o/@date descending return $o/@id/string()",
  },
  { doc: 'shop/customers.xml', body: "$d//customer[xs:date(@since) > xs:date('2022-01-01')]/name/string()" },
  { doc: 'support/tickets.xml', body: "string($d//ticket[@id = 'T-101']/body)" },
  { doc: 'shop/orders.xml', body: "for $o at $i in $d//order return concat($i, ':', $o/@id)" },
  { doc: 'shop/customers.xml', body: "$d//customer[@id = 'c3']" },
];

function timed(fn: () => unknown | Promise<unknown>): Promise<number[]> {
  return (async () => {
    await fn();
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = process.hrtime.bigint();
      await fn();
      samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    return samples.sort((a, b) => a - b);
  })();
}

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-librarian-'));
  const backend = await EmbeddedBackend.open({ dir, defaultCollection: C });
  const docs = corpusDocuments();
  try {
    for (const [path, content] of docs) await backend.store(path, content);
    const perQuery: number[] = [];
    const floors: number[] = [];
    for (const { doc, body } of QUERIES) {
      const path = `${C}/${doc}`;
      // In the store the document is bound by doc(); on the floor it is the $d variable.
      const query = body.startsWith('declare')
        ? body.replace(/(; )(?!.*; )/, `$1let $d := doc('${path}') return `)
        : `let $d := doc('${path}') return ${body}`;
      const samples = await timed(() => backend.query(query, { collection: C, maxResults: 100 }));
      perQuery.push(percentile(samples, 50));
      const parsed = parseXmlDocument(docs.get(path)!);
      const floorQuery = body.startsWith('declare')
        ? body.replace(/(; )(?!.*; )/, '$1declare variable $d external; ')
        : `declare variable $d external; ${body}`;
      const floor = await timed(() =>
        fontoxpath.evaluateXPathToStrings(
          floorQuery,
          null,
          null,
          { d: parsed },
          {
            language: fontoxpath.evaluateXPath.XQUERY_3_1_LANGUAGE,
          },
        ),
      );
      floors.push(percentile(floor, 50));
    }
    perQuery.sort((a, b) => a - b);
    floors.sort((a, b) => a - b);
    yield {
      name: 'librarian_query_warm_ms_p50',
      librarian_query_warm_ms_p50: round(percentile(perQuery, 50), 3),
      librarian_query_warm_ms_max_p50: round(perQuery.at(-1)!, 3),
      floor_fontoxpath_ms_p50: round(percentile(floors, 50), 3),
      queries: QUERIES.length,
      runs: RUNS,
    };
  } finally {
    await backend.close();
    await rm(dir, { recursive: true, force: true });
  }
}
