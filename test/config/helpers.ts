/** Shared helpers for the config tests: fixture paths and "load, expect ConfigError, give its issues". */
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { type LoadConfigOptions, loadConfig } from '../../src/config/index.ts';
import { ConfigError, type ConfigIssue } from '../../src/errors.ts';

export const FIXTURES = fileURLToPath(new URL('../fixtures/config/', import.meta.url));

export function fixture(name: string): string {
  return `${FIXTURES}${name}`;
}

/** Loads `file` expecting failure; returns the issues of the ConfigError thrown. */
export async function issuesOf(file: string, options: LoadConfigOptions = {}): Promise<ConfigIssue[]> {
  const error = await loadConfig(file, { env: {}, ...options }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return [...(error as ConfigError).issues];
}

/** The one issue whose path is `path`; fails the test when there is not exactly one. */
export function issueAt(issues: readonly ConfigIssue[], path: string): ConfigIssue {
  const found = issues.filter((i) => i.path === path);
  expect(found, `issues at ${path} in ${JSON.stringify(issues, null, 1)}`).toHaveLength(1);
  return found[0]!;
}
