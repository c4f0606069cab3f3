/** "did you mean" for misspelt keys, enum values and names. */
import { closest, distance } from 'fastest-levenshtein';

/**
 * The closest candidate to `word`, or undefined when none is close enough to be a likely typo:
 * none for words of one or two letters (everything is close to those), one edit for three letters,
 * else up to a third of the length (at least 2, at most 3), so a swapped pair of letters ('hgih' for
 * 'high') still finds its word.
 */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  if (candidates.length === 0 || word === '') return undefined;
  const best = closest(
    word.toLowerCase(),
    candidates.map((c) => c.toLowerCase()),
  );
  const original = candidates.find((c) => c.toLowerCase() === best)!;
  const allowed =
    word.length <= 2 ? 0 : word.length === 3 ? 1 : Math.min(3, Math.max(2, Math.floor(word.length / 3)));
  return distance(word.toLowerCase(), best) <= allowed ? original : undefined;
}

/** ` — did you mean 'x'?` or '' (ready to append to a message). */
export function suggestion(word: string, candidates: readonly string[]): string {
  const hit = didYouMean(word, candidates);
  return hit === undefined ? '' : ` — did you mean '${hit}'?`;
}
