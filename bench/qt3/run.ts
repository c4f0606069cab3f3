/**
 * Runs QT3 test sets through a librarian backend's query() (the embedded store: its pre-check,
 * rewrites, refusals, worker and result forms; or BaseX, the reference) and tallies each case:
 * passed, failed, refused (`unsupported: <feature>` or the read-only check), errors-any-code (an
 * error was expected and one came, with another code) and not applicable (a dependency the
 * librarian does not claim, or an environment it cannot set up).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { LibrarianBackend } from '../../librarian/backend.ts';
import { OrganismError } from '../../src/errors.ts';
import { type Catalog, readTestSet, type TestCase } from './catalog.ts';
import { type Answer, judge, type Verdict } from './judge.ts';
import { notApplicable, prepare } from './prepare.ts';

export type Engine = Pick<LibrarianBackend, 'store' | 'query'> & { name: string };

export type Outcome = Verdict | 'refused' | 'not_applicable';

export interface Tally {
  cases: number;
  passed: number;
  failed: number;
  refused: number;
  not_applicable: number;
  errors_any_code: number;
}

export interface CaseResult {
  set: string;
  name: string;
  engine: string;
  outcome: Outcome;
  why?: string;
}

export function emptyTally(): Tally {
  return { cases: 0, passed: 0, failed: 0, refused: 0, not_applicable: 0, errors_any_code: 0 };
}

export function add(t: Tally, outcome: Outcome): void {
  t.cases++;
  if (outcome === 'pass') t.passed++;
  else if (outcome === 'fail') t.failed++;
  else if (outcome === 'anycode') t.errors_any_code++;
  else t[outcome]++;
}

/** Passed over the cases that apply (everything but not applicable), in percent; null when none does. */
export function passRate(t: Tally): number | null {
  const applicable = t.cases - t.not_applicable;
  return applicable === 0 ? null : Math.round((1000 * t.passed) / applicable) / 10;
}

const CODE_IN_TEXT = /\b([A-Z]{4}\d{4})\b/;

function answerOf(error: unknown, signal: AbortSignal): Answer {
  const message = error instanceof Error ? error.message : String(error);
  // A query stopped for time or memory raised no XQuery error: it did not answer (never "any error").
  if (signal.aborted || /the query did not finish|ran longer than \d+ ms and was stopped/.test(message))
    return { kind: 'timeout', message };
  if (error instanceof OrganismError) {
    const details = (error.details ?? {}) as Record<string, unknown>;
    if (error.code === 'librarian.unsupported')
      return { kind: 'refused', feature: String(details.feature ?? 'unsupported'), message };
    if (error.code === 'librarian.read_only') return { kind: 'refused', feature: 'read-only check', message };
    const code =
      typeof details.xquery_code === 'string' ? details.xquery_code : CODE_IN_TEXT.exec(message)?.[1];
    return { kind: 'error', code: code ?? null, message };
  }
  return { kind: 'error', code: CODE_IN_TEXT.exec(message)?.[1] ?? null, message };
}

export interface RunOptions {
  timeoutMs: number;
  maxResults: number;
}

/** One engine's store of the checkout documents a case needs: each stored once, or why it cannot be. */
class Documents {
  private readonly stored = new Map<string, string | null>();
  constructor(
    private readonly engine: Engine,
    private readonly qt3Dir: string,
  ) {}

  async ensure(documents: Map<string, string>): Promise<string | null> {
    for (const [path, file] of documents) {
      if (!this.stored.has(path)) {
        try {
          await this.engine.store(path, readFileSync(file, 'utf8'));
          this.stored.set(path, null);
        } catch (error) {
          const code = error instanceof OrganismError ? error.code : (error as NodeJS.ErrnoException).code;
          this.stored.set(
            path,
            code === 'ENOENT'
              ? `source document missing from the checkout (${relative(this.qt3Dir, file)})`
              : `source document cannot be stored (${code ?? 'error'})`,
          );
        }
      }
      const why = this.stored.get(path);
      if (why) return why;
    }
    return null;
  }
}

export class Qt3Runner {
  private readonly documents = new Map<string, Documents>();

  constructor(
    private readonly catalog: Catalog,
    private readonly engines: Engine[],
    private readonly options: RunOptions,
  ) {
    for (const e of engines) this.documents.set(e.name, new Documents(e, catalog.dir));
  }

  /** Runs one test set on every engine: a tally per engine and each case's outcome. */
  async runSet(name: string): Promise<{ tallies: Map<string, Tally>; results: CaseResult[] }> {
    const set = readTestSet(this.catalog, name);
    const tallies = new Map(this.engines.map((e) => [e.name, emptyTally()]));
    const results: CaseResult[] = [];
    for (const tc of set.cases) {
      for (const engine of this.engines) {
        const r = await this.runCase(tc, engine);
        add(tallies.get(engine.name)!, r.outcome);
        results.push(r);
      }
    }
    return { tallies, results };
  }

  async runCase(tc: TestCase, engine: Engine): Promise<CaseResult> {
    const base = { set: tc.set, name: tc.name, engine: engine.name };
    const na = notApplicable(tc);
    if (na) return { ...base, outcome: 'not_applicable', why: na };
    const prepared = prepare(tc, this.catalog.dir);
    const unstored = await this.documents.get(engine.name)!.ensure(prepared.documents);
    if (unstored) return { ...base, outcome: 'not_applicable', why: unstored };
    // The engine's own limit (the embedded store's maxQueryMs is timeoutMs) comes first; this is the backstop.
    const signal = AbortSignal.timeout(this.options.timeoutMs + 10_000);
    let answer: Answer;
    try {
      const r = await engine.query(prepared.query, {
        collection: '/db/qt3',
        maxResults: this.options.maxResults,
        signal,
      });
      answer = { kind: 'ok', hits: r.hits, results: r.results };
    } catch (error) {
      answer = answerOf(error, signal);
    }
    if (answer.kind === 'refused') return { ...base, outcome: 'refused', why: answer.feature };
    const setDir = dirname(this.catalog.sets.get(tc.set)!);
    const namespaces = Object.fromEntries((tc.environment?.namespaces ?? []).map((n) => [n.prefix, n.uri]));
    const judged = judge(answer, tc.result, {
      namespaces,
      readFile: (file) => readFileSync(join(setDir, file), 'utf8'),
    });
    return { ...base, outcome: judged.verdict, ...(judged.why ? { why: judged.why } : {}) };
  }
}
