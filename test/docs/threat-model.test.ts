/**
 * docs/threat-model.md names the tests that show each guarantee: every one of them exists, and every
 * attack test in test/attacks/ is named, so the page cannot drift from the suite.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = readFileSync(`${ROOT}docs/threat-model.md`, 'utf8');
const named = [...PAGE.matchAll(/`(test\/[^`]+)`/g)].map((m) => m[1]!);

describe('docs/threat-model.md', () => {
  it('names only tests and folders that exist', () => {
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((path) => !existsSync(`${ROOT}${path}`))).toEqual([]);
  });

  it('names every attack test, or says it keeps running beside the named ones', () => {
    const attacks = readdirSync(`${ROOT}test/attacks`).filter((f) => f.endsWith('.test.ts'));
    const unnamed = attacks.filter((f) => !named.includes(`test/attacks/${f}`));
    // The pre-existing ones are named by family in the page's last section.
    const families = [
      'mcp',
      'tool-modules',
      'compiled-cache',
      'history-secrets',
      'failure',
      'dashboard',
      'telemetry',
    ];
    expect(unnamed.filter((f) => !families.some((family) => f.startsWith(family)))).toEqual([]);
  });
});
