/** Reading the guard corpora (test/guard/corpus/<name>.jsonl): one JSON case a line, blank lines skipped. */
import { readFileSync } from 'node:fs';
import type { VerdictKind } from '../../src/guard/types.ts';

/** What every corpus case expects of its guard; each corpus adds the input it judges. */
export interface ExpectedVerdict {
  verdict: VerdictKind;
  rule_id: string | null;
  note?: string;
}

export function loadCorpus<T>(name: 'email' | 'families' | 'shell' | 'web'): T[] {
  return readFileSync(new URL(`./corpus/${name}.jsonl`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}
