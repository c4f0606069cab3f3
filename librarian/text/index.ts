/**
 * In-memory inverted index with BM25 ranking (k1 = 1.2, b = 0.75, the Lucene defaults): term ->
 * document -> term frequency. The embedded backend keeps one over its store and rebuilds it from
 * disk at open; the fake eXist in the tests uses it to play Lucene.
 */
import { tokens } from './tokenize.ts';

const K1 = 1.2;
const B = 0.75;

export interface Scored {
  path: string;
  score: number;
}

export class InvertedIndex {
  private readonly postings = new Map<string, Map<string, number>>();
  private readonly docTerms = new Map<string, string[]>();
  private readonly lengths = new Map<string, number>();
  private totalLength = 0;

  get size(): number {
    return this.lengths.size;
  }

  /** Indexes (or re-indexes) the document at `path` with its searchable text. */
  set(path: string, text: string): void {
    this.remove(path);
    const counts = new Map<string, number>();
    let length = 0;
    for (const t of tokens(text)) {
      counts.set(t.term, (counts.get(t.term) ?? 0) + 1);
      length++;
    }
    for (const [term, tf] of counts) {
      let posting = this.postings.get(term);
      if (!posting) {
        posting = new Map();
        this.postings.set(term, posting);
      }
      posting.set(path, tf);
    }
    this.docTerms.set(path, [...counts.keys()]);
    this.lengths.set(path, length);
    this.totalLength += length;
  }

  remove(path: string): void {
    const terms = this.docTerms.get(path);
    if (!terms) return;
    for (const term of terms) {
      const posting = this.postings.get(term);
      posting?.delete(path);
      if (posting?.size === 0) this.postings.delete(term);
    }
    this.totalLength -= this.lengths.get(path) ?? 0;
    this.docTerms.delete(path);
    this.lengths.delete(path);
  }

  /** BM25 score of one document for `terms` (0 when none occurs). */
  score(path: string, terms: readonly string[]): number {
    const length = this.lengths.get(path);
    if (length === undefined) return 0;
    const n = this.lengths.size;
    const avg = this.totalLength / n || 1;
    let score = 0;
    for (const term of new Set(terms)) {
      const posting = this.postings.get(term);
      const tf = posting?.get(path);
      if (!posting || !tf) continue;
      const idf = Math.log(1 + (n - posting.size + 0.5) / (posting.size + 0.5));
      score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / avg));
    }
    return score;
  }

  /** Documents containing any of `terms` and accepted by `filter`, best first, ties by path. */
  search(terms: readonly string[], filter: (path: string) => boolean = () => true): Scored[] {
    const candidates = new Set<string>();
    for (const term of terms) for (const path of this.postings.get(term)?.keys() ?? []) candidates.add(path);
    const out: Scored[] = [];
    for (const path of candidates) if (filter(path)) out.push({ path, score: this.score(path, terms) });
    return out.sort(compareScored);
  }
}

export function compareScored(a: Scored, b: Scored): number {
  return b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** Scores as returned to callers: four decimals are plenty to read an order from. */
export function roundScore(score: number): number {
  return Math.round(score * 10_000) / 10_000;
}
