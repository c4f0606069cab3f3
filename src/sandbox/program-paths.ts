/**
 * What a program started in the sandbox needs to see of the machine's files besides `/` (which it
 * sees read-only anyway): its own script, and the node_modules its imports resolve from, when
 * those sit in a covered place (the config's folder, a project under /tmp). Without them an MCP
 * server in the user's project (`node_modules/.bin/x`, `./servers/x.mjs`) could not even start.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { within } from './bubblewrap.ts';

/**
 * For each absolute argv entry that is a file: its folder (or only the file, when the folder holds
 * a hidden path), and every `node_modules` folder Node would search from there up to `/`; only
 * those under a hidden path or /tmp. Paths that hold a hidden one are left out (the sandbox would
 * refuse them).
 */
export function programReadOnlyPaths(argv: readonly string[], hide: readonly string[]): string[] {
  const hidden = hide.flatMap((p) => realOf(p) ?? []);
  const holdsHidden = (path: string) => {
    const real = realOf(path);
    return real === undefined || hidden.some((h) => within(h, real));
  };
  const out = new Set<string>();
  for (const arg of argv) {
    if (!isAbsolute(arg) || !isFile(arg)) continue;
    // The file at the path given and at its real path (a .bin entry is a symlink into the package).
    for (const file of new Set([arg, realOf(arg) ?? arg])) {
      const folder = dirname(file);
      if (!folder.split(sep).includes('node_modules')) out.add(holdsHidden(folder) ? file : folder);
      for (let dir = folder; ; dir = dirname(dir)) {
        const modules = dir.endsWith(`${sep}node_modules`) ? dir : join(dir, 'node_modules');
        if (existsSync(modules) && !holdsHidden(modules)) out.add(modules);
        if (dirname(dir) === dir) break;
      }
    }
  }
  // Only what a cover or the private /tmp took away; the rest of `/` is visible read-only anyway.
  const covered = (p: string) => within(p, '/tmp') || hidden.some((h) => within(realOf(p) ?? p, h));
  // A path inside another one listed is visible through it already.
  const all = [...out].filter(covered);
  return all.filter((p) => !all.some((q) => q !== p && within(p, q)));
}

function realOf(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
