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
): string[] {
  const seen = new Set<string>([module]);
  const stack = [module];
  while (stack.length > 0) {
    const file = stack.pop()!;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // a missing helper fails the tool's own import; the manifest need not say more
    }
    for (const match of text.matchAll(SPECIFIERS)) {
      const target = resolveLocal(dirname(file), match[2]!);
      if (!target || seen.has(target) || !covered(target, root, trusted)) continue;
      seen.add(target);
      stack.push(target);
    }
  }
  seen.delete(module);
  return [...seen].sort();
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
