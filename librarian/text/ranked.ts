/**
 * A search answer ranked here: BM25 order from an InvertedIndex, scores rounded, a snippet from
 * each document's text. The embedded store and the BaseX backend both answer with it, so a search
 * gives the same order and snippets whichever of them stores the documents.
 */
import type { SearchResult } from '../backend.ts';
import { type InvertedIndex, roundScore } from './index.ts';
import { makeSnippet } from './snippet.ts';

/** The `limit` best documents for `words` among those `within` accepts; `textOf` gives a document's text. */
export function rankedResults(
  index: InvertedIndex,
  words: readonly string[],
  within: (path: string) => boolean,
  limit: number,
  textOf: (path: string) => string,
): SearchResult {
  const ranked = index.search(words, within).slice(0, limit);
  return {
    results: ranked.map(({ path, score }) => ({
      path,
      score: roundScore(score),
      snippet: makeSnippet(textOf(path), words),
    })),
  };
}
