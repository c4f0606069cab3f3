import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores in CI: forks keep a crashing daemon test from taking the runner down with it.
    pool: 'forks',
    reporters: ['default'],
  },
});
