/**
 * The differential suite's corpus (queries.json, run over the documents in docs/) and its rules.
 *
 * What is normalized, and why (only what XQuery 3.1 leaves to the implementation):
 * - `compare: "unordered"`: the results are compared as multisets, for queries whose order the
 *   spec leaves implementation-dependent (documents of a collection, distinct-values, map:keys,
 *   groups without order by). Each such entry says why in its `note`.
 * - `compare: "json"`: each result is parsed as JSON and compared as a value, so the order of a
 *   map's keys (implementation-dependent in JSON output) does not count.
 * - `compare: "whitespace"`: whitespace between tags does not count (fn:serialize's indentation:
 *   BaseX indents by default, a setting of its own).
 * Nothing else is: serialization whitespace elsewhere, number forms and namespace declarations count.
 *
 * `known_wrong` marks a query the embedded store still answers wrong, saying how: its test is
 * expected to fail (it.fails), so it turns red once fixed and the mark must go.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Variables } from '../../../librarian/backend.ts';

export interface CorpusQuery {
  id: string;
  /** What the query exercises (the feature names). */
  kind: string;
  query: string;
  /** External variables bound for the query (librarian_query's `variables`). */
  variables?: Variables;
  compare?: 'unordered' | 'json' | 'whitespace';
  note?: string;
  known_wrong?: string;
}

export interface Answer {
  ok: boolean;
  hits?: number;
  results?: string[];
  /** For a failure: the error code, the XQuery error code and the message. */
  code?: string;
  xqueryCode?: string;
  message?: string;
}

const HERE = import.meta.dirname;

export function corpus(): CorpusQuery[] {
  return JSON.parse(readFileSync(join(HERE, 'queries.json'), 'utf8')) as CorpusQuery[];
}

/** The fixture documents: librarian path (under /db/organism) -> content. */
export function corpusDocuments(): Map<string, string> {
  const root = join(HERE, 'docs');
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.set(`/db/organism/${relative(root, path)}`, readFileSync(path, 'utf8'));
    }
  };
  walk(root);
  return out;
}

/** A refusal the embedded store announces before running: "unsupported: <feature>". */
export const UNSUPPORTED = /^unsupported: \S/;

function parsed(results: string[]): unknown[] {
  return results.map((r) => {
    try {
      return JSON.parse(r);
    } catch {
      return { notJson: r };
    }
  });
}

/** Why two answers differ under the query's rule, or null when they agree. */
export function difference(entry: CorpusQuery, embedded: Answer, reference: Answer): string | null {
  if (!embedded.ok && embedded.message && UNSUPPORTED.test(embedded.message)) return null;
  if (!reference.ok || !embedded.ok) {
    if (!reference.ok && !embedded.ok && reference.xqueryCode && reference.xqueryCode === embedded.xqueryCode)
      return null;
    return 'one failed, or both failed with different XQuery error codes';
  }
  let a = embedded.results ?? [];
  let b = reference.results ?? [];
  if (embedded.hits !== reference.hits) return `hits ${embedded.hits} vs ${reference.hits}`;
  if (entry.compare === 'json') return isDeepStrictEqual(parsed(a), parsed(b)) ? null : 'JSON values differ';
  if (entry.compare === 'whitespace') {
    a = a.map((r) => r.replace(/>\s+</g, '><'));
    b = b.map((r) => r.replace(/>\s+</g, '><'));
  }
  if (entry.compare === 'unordered') {
    a = [...a].sort();
    b = [...b].sort();
  }
  return isDeepStrictEqual(a, b) ? null : 'results differ';
}
