import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The audit key's default place is under $XDG_CONFIG_HOME; tests (and the daemons they start) get
// a throwaway one, so a test run never writes into the developer's own ~/.config/organism.
const configHome = mkdtempSync(join(tmpdir(), 'organism-test-config-'));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    env: { XDG_CONFIG_HOME: configHome },
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores in CI: forks keep a crashing daemon test from taking the runner down with it.
    pool: 'forks',
    reporters: ['default'],
  },
});
