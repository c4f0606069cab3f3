/**
 * One tokenizer for the index, the query terms and the snippets, shared by both backends (and sent
 * to eXist as the query's terms), so a term means the same thing everywhere. It mirrors Lucene's
 * StandardAnalyzer closely enough for ranking: runs of letters and digits, lower-cased, English
 * stop words dropped (the same list Lucene's StandardAnalyzer drops).
 */

import { LibrarianError } from '../../src/errors.ts';

export const STOP_WORDS: ReadonlySet<string> = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);

const WORD = /[\p{L}\p{N}]+/gu;

export interface Token {
  term: string;
  /** Offsets of the token in the original text. */
  start: number;
  end: number;
}

/** Every indexable token of `text`, in order, with its offsets. */
export function tokens(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(WORD)) {
    const term = m[0].toLowerCase();
    if (STOP_WORDS.has(term)) continue;
    out.push({ term, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** The distinct terms of a search query, in the order they first appear. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokens(query).map((t) => t.term))];
}

/** The terms of a search, or an error saying the query has nothing to search for. */
export function requireSearchTerms(query: string): string[] {
  const terms = queryTerms(query);
  if (terms.length === 0) {
    throw new LibrarianError(
      'librarian.invalid_argument',
      `search query ${JSON.stringify(query.slice(0, 80))} has no searchable words (only stop words or punctuation)`,
    );
  }
  return terms;
}
