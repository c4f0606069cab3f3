import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One temp folder for the run: the workers' TMPDIR, so every test's temp files (and those of the
// daemons, sandboxes and browsers they start) land in it, and test/temp-setup.ts removes it at the
// end. The main process keeps the system's: its global setups clean up after themselves.
const runTmp = mkdtempSync(join(tmpdir(), 'organism-tests-'));
// As /tmp is: the tests that run a daemon as another user need to reach their folders in it.
chmodSync(runTmp, 0o1777);
process.env.ORGANISM_TEST_TMP = runTmp;
// The audit key's default place is under $XDG_CONFIG_HOME; tests (and the daemons they start) get
// a throwaway one, so a test run never writes into the developer's own ~/.config/organism.
const configHome = join(runTmp, 'config');
mkdirSync(configHome);

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// The examples' own tests run too: an example that stops working fails the suite.
const everyTest = ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'];
// Files that need a module graph of their own: vi.mock replaces a module for the whole file, which
// works only if nothing imported it before.
const ownModules = ['test/tools/files-swap.test.ts'];

// What every file runs with, in either project below.
const common = {
  // Modules that import the package by name (the default listeners, users' examples) run against the
  // source under test, as tsconfig.json's `paths` typecheck them; the built package maps the same
  // names to dist/ through package.json `exports`.
  resolve: {
    alias: [
      { find: /^organism$/, replacement: source('./src/index.ts') },
      { find: /^organism\/testing$/, replacement: source('./src/testing/index.ts') },
    ],
  },
  test: {
    env: { XDG_CONFIG_HOME: configHome, TMPDIR: runTmp },
    setupFiles: ['test/setup-file.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores in CI: forks keep a crashing daemon test from taking the runner down with it.
    pool: 'forks' as const,
  },
};

export default defineConfig({
  test: {
    // Once for the run (a project that extended this config would run them again).
    globalSetup: ['test/global-setup.ts', 'test/build-setup.ts', 'test/pack-setup.ts', 'test/temp-setup.ts'],
    reporters: ['default'],
    // Two files at a time (vitest's default on two cores is one): most of a file's time is waiting
    // on the daemons, servers and browsers it starts. Not more: the tests are measured on two cores.
    maxWorkers: 2,
    projects: [
      // A worker runs file after file in one module graph instead of importing the runtime afresh
      // for each (1.2 s a file, 290 files): the suite's state is per test (temp folders, ports,
      // daemons), and what the runtime keeps per process is reset by the tests that set it.
      {
        ...common,
        test: { ...common.test, name: 'shared', include: everyTest, exclude: ownModules, isolate: false },
      },
      { ...common, test: { ...common.test, name: 'own-modules', include: ownModules } },
    ],
  },
});
