/**
 * `organism run` from the built package starts the daemon from the bundle bin/bundle-daemon.js
 * wrote (fewer modules to load at every start), and never loads a bundled module a second time from
 * its own file: with a listener's handler importing 'organism' and a tool imported by path both
 * run, a module hook records every dist/ module the daemon imports, and none of them is bundled.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, startDaemonProcess, useTool } from '../helpers/daemon.ts';

const RECORD_HOOK = fileURLToPath(new URL('./support/record-dist-imports.mjs', import.meta.url));
const BUNDLE_SCRIPT = join(REPO_ROOT, 'bin/bundle-daemon.js');

type Plan = { bundled: string[] };

describe('the daemon bundle', { timeout: 60_000 }, () => {
  it('is what organism run loads, and no bundled module loads again from its file', async () => {
    const record = join(await mkdtemp(join(tmpdir(), 'organism-dist-imports-')), 'imports.txt');
    await writeFile(record, '');
    const daemon = await startDaemonProcess([], {
      NODE_OPTIONS: `--import=${pathToFileURL(RECORD_HOOK).href}`,
      DIST_IMPORTS_FILE: record,
    });
    try {
      const answer = await useTool(daemon.url, 'calculate', { expression: '2 ** 10' });
      expect(answer.status).toBe('ok');
    } finally {
      await daemon.stop();
    }
    const loaded = new Set(
      (await readFile(record, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((url) => fileURLToPath(url)),
    );
    const { daemonBundlePlan } = (await import(pathToFileURL(BUNDLE_SCRIPT).href)) as {
      daemonBundlePlan(tree: string, esbuild: unknown): Promise<Plan>;
    };
    const { bundled } = await daemonBundlePlan(join(REPO_ROOT, 'dist'), await import('esbuild'));
    expect(bundled).toContain(join(REPO_ROOT, 'dist/src/daemon.js'));
    expect(bundled.length).toBeGreaterThan(100);
    expect(bundled.filter((file) => loaded.has(file))).toEqual([]);
    // The listener's `import 'organism'` and the tool's module came from their own files.
    expect(loaded).toContain(join(REPO_ROOT, 'dist/src/index.js'));
    expect(loaded).toContain(join(REPO_ROOT, 'dist/tools/calculate.js'));
  });
});
