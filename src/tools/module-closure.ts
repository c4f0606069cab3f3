/**
 * The local modules a tool module imports, directly or through each other: what a tool's behaviour
 * really depends on besides the runtime. Only relative imports are followed, and only files inside
 * the package root outside `src/` (the runtime itself) and `node_modules/` (the dependencies,
 * pinned by the lock file). Found by reading the import statements, which is what tsx loads too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

const SPECIFIERS = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;

/**
 * Absolute paths of the local helper modules `module` depends on (not `module` itself), sorted.
 * `trusted` are the top folders under root left out: Organism's own src/ and node_modules/ for its
 * tools; for a user's tools (root: their project) only node_modules/, since their src/ is theirs.
 */
export function moduleClosure(
  module: string,
  root: string,
  trusted: readonly string[] = ['src', 'node_modules'],
  /**
   * The local imports of each file read so far, for closures taken together (a catalog's tool
   * modules share most of their helpers): each file is then read once for all of them, not once
   * per module. Only for files that do not change meanwhile.
   */
  memo?: Map<string, readonly string[]>,
): string[] {
  const seen = new Set<string>([module]);
  const stack = [module];
  while (stack.length > 0) {
    const file = stack.pop()!;
    for (const target of localImports(file, memo)) {
      if (seen.has(target) || !covered(target, root, trusted)) continue;
      seen.add(target);
      stack.push(target);
    }
  }
  seen.delete(module);
  return [...seen].sort();
}

/** The files `file`'s relative imports resolve to (none when it cannot be read). */
function localImports(file: string, memo?: Map<string, readonly string[]>): readonly string[] {
  const known = memo?.get(file);
  if (known) return known;
  const targets: string[] = [];
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // a missing helper fails the tool's own import; the manifest need not say more
  }
  for (const match of text?.matchAll(SPECIFIERS) ?? []) {
    const target = resolveLocal(dirname(file), match[2]!);
    if (target) targets.push(target);
  }
  memo?.set(file, targets);
  return targets;
}

function resolveLocal(from: string, specifier: string): string | undefined {
  const base = resolve(from, specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.js`, `${base}/index.ts`, `${base}/index.js`]) {
    if (existsSync(candidate) && !candidate.endsWith(sep)) return candidate;
  }
  return undefined;
}

function covered(file: string, root: string, trusted: readonly string[]): boolean {
  const rel = relative(root, file);
  if (rel.startsWith('..') || isAbsolute(rel)) return false;
  return !trusted.includes(rel.split(sep)[0] ?? '');
}
