/** Path comparisons the file guards share. */
import { realpathSync } from 'node:fs';
import path from 'node:path';

/** Whether `p` is `dir` or below it (both absolute, normalised). */
export function isInside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** `p` with its links resolved, or `p` itself when it does not exist (yet). */
export function realOrSelf(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}
