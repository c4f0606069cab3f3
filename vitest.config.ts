import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The audit key's default place is under $XDG_CONFIG_HOME; tests (and the daemons they start) get
// a throwaway one, so a test run never writes into the developer's own ~/.config/organism.
const configHome = mkdtempSync(join(tmpdir(), 'organism-test-config-'));

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
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
    // The examples' own tests run too: an example that stops working fails the suite.
    include: ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    globalSetup: [
      'test/global-setup.ts',
      'test/build-setup.ts',
      'test/pack-setup.ts',
      'test/volume-setup.ts',
    ],
    env: { XDG_CONFIG_HOME: configHome },
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores in CI: forks keep a crashing daemon test from taking the runner down with it.
    pool: 'forks',
    reporters: ['default'],
  },
});
