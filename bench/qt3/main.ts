/**
 * `npm run qt3 -- <qt3-dir> [--basex] [--sets a,b,...] [--log failures.jsonl]`: the W3C QT3 test
 * suite over the feature sets of issue 32, through the librarian's embedded store (and with
 * --basex through a real BaseX server as well, the reference that shows how well the runner
 * judges). Prints one JSON line per test set and engine and a total, then a table.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BasexBackend } from '../../librarian/basex/backend.ts';
import { EmbeddedBackend } from '../../librarian/embedded/backend.ts';
import { type BasexServer, startBasex } from '../../test/helpers/basex.ts';
import { readCatalog, selectSets } from './catalog.ts';
import { add, type CaseResult, type Engine, emptyTally, passRate, Qt3Runner, type Tally } from './run.ts';

/**
 * Issue 32's feature sets. prod-FLWORExpr depends wholly on schemaImport, so the FLWOR clauses the
 * librarian answers are covered by prod-ForClause, prod-LetClause and prod-WhereClause as well.
 */
export const DEFAULT_SETS = [
  'prod-FLWORExpr',
  'prod-ForClause',
  'prod-LetClause',
  'prod-WhereClause',
  'prod-GroupByClause',
  'prod-OrderByClause',
  'prod-CountClause',
  'prod-WindowClause',
  'prod-TryCatchExpr',
  'prod-StringConstructor',
  'prod-SwitchExpr',
  'fn-format-number',
  'fn-format-integer',
  'fn-format-date',
  'fn-format-dateTime',
  'fn-adjust-dateTime-to-timezone',
  'fn-matches',
  'fn-replace',
  'fn-contains-token',
  'fn-analyze-string',
  'fn-sort',
  'fn-serialize',
  'fn-xml-to-json',
  'fn-parse-json',
  'op-numeric-add',
  'map-merge',
  'map-get',
  'array-*',
];

const USAGE = `usage: npm run qt3 -- <qt3-dir> [--basex] [--sets name,prefix-*,...] [--log failures.jsonl]

<qt3-dir> is a checkout of the W3C QT3 test suite (the folder holding catalog.xml):
  git clone https://github.com/w3c/qt3tests
Its files stay there; nothing is copied into this repository.`;

export interface MainOptions {
  dir: string;
  sets: string[];
  basex: boolean;
  log?: string;
  timeoutMs: number;
  write(line: string): void;
}

export function parseOptions(argv: string[]): MainOptions | string {
  let parsed: ReturnType<
    typeof parseArgs<{ options: Record<string, { type: 'string' | 'boolean' }>; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        basex: { type: 'boolean' },
        sets: { type: 'string' },
        log: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    return `qt3: ${(error as Error).message}\n${USAGE}`;
  }
  const dir = parsed.positionals[0];
  if (parsed.values.help || !dir) return `qt3: no QT3 directory given\n${USAGE}`;
  if (!existsSync(join(dir, 'catalog.xml'))) return `qt3: ${resolve(dir)} has no catalog.xml\n${USAGE}`;
  const sets =
    typeof parsed.values.sets === 'string' ? parsed.values.sets.split(',').filter(Boolean) : DEFAULT_SETS;
  return {
    dir: resolve(dir),
    sets,
    basex: parsed.values.basex === true,
    ...(typeof parsed.values.log === 'string' ? { log: parsed.values.log } : {}),
    timeoutMs: 20_000,
    write: (line) => process.stdout.write(`${line}\n`),
  };
}

interface Opened {
  engines: Engine[];
  close(): Promise<void>;
}

async function openEngines(basex: boolean, timeoutMs: number): Promise<Opened> {
  const dir = await mkdtemp(join(tmpdir(), 'qt3-librarian-'));
  const embedded = await EmbeddedBackend.open({
    dir,
    defaultCollection: '/db/qt3',
    maxQueryMs: timeoutMs,
  });
  const engines: Engine[] = [
    { name: 'embedded', store: (p, c) => embedded.store(p, c), query: (q, o) => embedded.query(q, o) },
  ];
  let server: BasexServer | undefined;
  let backend: BasexBackend | undefined;
  if (basex) {
    server = await startBasex(60_000);
    const s = server;
    backend = new BasexBackend({
      host: s.host,
      port: s.port,
      user: s.user,
      password: () => s.password,
      defaultCollection: '/db/qt3',
      queryTimeoutS: Math.ceil(timeoutMs / 1000),
    });
    const b = backend;
    engines.push({ name: 'basex', store: (p, c) => b.store(p, c), query: (q, o) => b.query(q, o) });
  }
  return {
    engines,
    close: async () => {
      await embedded.close();
      await backend?.close();
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function line(engine: string, set: string, t: Tally): Record<string, unknown> {
  return { name: 'qt3', engine, set, ...t, pass_rate: passRate(t) };
}

export async function runQt3(
  options: MainOptions,
  opened?: Opened,
): Promise<Map<string, Map<string, Tally>>> {
  const catalog = readCatalog(options.dir);
  const sets = selectSets(catalog, options.sets);
  const own = opened ?? (await openEngines(options.basex, options.timeoutMs));
  const all = new Map<string, Map<string, Tally>>();
  const log: CaseResult[] = [];
  try {
    const runner = new Qt3Runner(catalog, own.engines, { timeoutMs: options.timeoutMs, maxResults: 10_000 });
    const totals = new Map(own.engines.map((e) => [e.name, emptyTally()]));
    for (const set of sets) {
      const { tallies, results } = await runner.runSet(set);
      all.set(set, tallies);
      for (const r of results) {
        add(totals.get(r.engine)!, r.outcome);
        if (r.outcome !== 'pass') log.push(r);
      }
      for (const [engine, t] of tallies) options.write(JSON.stringify(line(engine, set, t)));
    }
    all.set('total', totals);
    for (const [engine, t] of totals) options.write(JSON.stringify(line(engine, 'total', t)));
    options.write(
      JSON.stringify({
        name: 'qt3_judge',
        note: `assertion expressions evaluated by fontoxpath ${fontoxpathVersion()} directly; results judged from librarian_query's strings (assert-type by lexical form)`,
      }),
    );
    options.write('');
    for (const row of table(
      all,
      own.engines.map((e) => e.name),
    ))
      options.write(row);
    if (options.log) writeFileSync(options.log, log.map((r) => JSON.stringify(r)).join('\n') + '\n');
  } finally {
    if (!opened) await own.close();
  }
  return all;
}

function fontoxpathVersion(): string {
  return (createRequire(import.meta.url)('fontoxpath/package.json') as { version: string }).version;
}

function percent(t: Tally): string {
  const rate = passRate(t);
  return rate === null ? '–' : `${rate}%`;
}

/**
 * A Markdown table, one row per set: the cases, those that apply, the first engine's passed /
 * refused / failed / other error code / pass rate, and each other engine's pass rate beside it.
 */
export function table(all: Map<string, Map<string, Tally>>, engines: string[]): string[] {
  const [first, ...others] = engines as [string, ...string[]];
  const head = [
    'test set',
    'cases',
    'apply',
    `${first}: passed`,
    'refused',
    'failed',
    'other error code',
    'pass rate',
    ...others.map((e) => `${e}: pass rate`),
  ];
  const rows = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const [set, tallies] of all) {
    const t = tallies.get(first)!;
    const cells = [
      set,
      t.cases,
      t.cases - t.not_applicable,
      t.passed,
      t.refused,
      t.failed,
      t.errors_any_code,
      percent(t),
      ...others.map((e) => percent(tallies.get(e)!)),
    ];
    rows.push(`| ${cells.join(' | ')} |`);
  }
  return rows;
}
