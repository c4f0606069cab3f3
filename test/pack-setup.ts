/**
 * One `npm pack` per test run, shared by the test files that install the package into a fresh
 * project (test/e2e/package.test.ts, test/docs/doctest-*.test.ts): this only makes the folder they
 * share; the first of them to need the tarball packs it there (test/helpers/doctest/project.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where this run's packed package is (or will be): see packedPackage(). */
    organismPackDir: string;
  }
}

let dir: string | undefined;

export function setup(project: TestProject): void {
  dir = mkdtempSync(join(tmpdir(), 'organism-pack-'));
  project.provide('organismPackDir', dir);
}

export function teardown(): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
