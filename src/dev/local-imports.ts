/**
 * The local files a user's module imports, directly or through each other: what `organism dev`
 * watches besides the module itself. Only relative specifiers are followed (packages are not the
 * project's to edit while it runs), and they are resolved the way esbuild and TypeScript do for a
 * listener: `./helper.js` in a .ts file names `helper.ts` (NodeNext style, what `organism init`'s
 * tsconfig asks for), `./helper` any of the module extensions, a folder its index file.
 *
 * Read from the import statements rather than from a compile: it works the same for .js and .ts,
 * from source and compiled, with or without esbuild, and a file that does not parse (the edit
 * being saved) still yields the imports it names.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** `from '...'` (import and export), `import('...')`, `import '...'`, `require('...')`. */
const SPECIFIERS = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(['"])(\.{1,2}\/[^'"\n]+)\1/g;

/** What a written extension may stand for, in the order TypeScript tries them. */
const SWAPS: Record<string, readonly string[]> = {
  '.js': ['.js', '.ts', '.tsx', '.jsx'],
  '.jsx': ['.jsx', '.tsx'],
  '.mjs': ['.mjs', '.mts'],
  '.cjs': ['.cjs', '.cts'],
};
const BARE = ['.ts', '.tsx', '.mts', '.js', '.mjs', '.jsx', '.cts', '.cjs', '.json'];

/** Absolute paths of the local files `entry` imports (not `entry` itself), sorted; missing ones left out. */
export function localImportClosure(
  entry: string,
  memo: Map<string, readonly string[]> = new Map(),
): string[] {
  const seen = new Set<string>([entry]);
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    for (const target of importsOf(file, memo)) {
      if (seen.has(target) || target.includes('/node_modules/')) continue;
      seen.add(target);
      stack.push(target);
    }
  }
  seen.delete(entry);
  return [...seen].sort();
}

function importsOf(file: string, memo: Map<string, readonly string[]>): readonly string[] {
  const known = memo.get(file);
  if (known) return known;
  let text = '';
  try {
    // A JSON file or a binary has no imports worth reading; a big one is no source file.
    if (!file.endsWith('.json') && statSync(file).size <= 4 * 1024 * 1024) text = readFileSync(file, 'utf8');
  } catch {
    // gone since it was named: the next change event brings it back
  }
  const found: string[] = [];
  for (const match of text.matchAll(SPECIFIERS)) {
    const target = resolveSpecifier(dirname(file), match[2]!);
    if (target) found.push(target);
  }
  memo.set(file, found);
  return found;
}

function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(from, specifier.replace(/[?#].*$/, ''));
  const ext = /\.[cm]?[jt]sx?$|\.json$/.exec(base)?.[0];
  const stem = ext === undefined ? base : base.slice(0, -ext.length);
  const candidates =
    ext === undefined
      ? [...BARE.map((e) => base + e), ...BARE.map((e) => `${base}/index${e}`)]
      : (SWAPS[ext] ?? [ext]).map((e) => stem + e);
  return candidates.find(isFile);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
