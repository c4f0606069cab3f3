/**
 * The runtime's tool-result codes are named once (src/tools/failure-codes.ts), and
 * docs/reference/tool-results.md is generated from them and lists each.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { referencePath } from '../../src/reference/files.ts';
import { renderToolResultsReference } from '../../src/reference/tool-results.ts';
import { TOOL_FAILURE_CODES } from '../../src/tools/failure-codes.ts';

const PAGE = readFileSync(referencePath('tool-results.md'), 'utf8');
const codes = Object.keys(TOOL_FAILURE_CODES);

describe('tool-result codes', () => {
  it('docs/reference/tool-results.md is what the codes render (run npx tsx src/reference/update.ts)', () => {
    expect(PAGE).toBe(renderToolResultsReference());
  });

  it('the page names every code the runtime gives', () => {
    expect(codes.filter((code) => !PAGE.includes(`\`${code}\``))).toEqual([]);
  });

  it("every code in the page's dispatcher table is one of them", () => {
    const table = PAGE.slice(PAGE.indexOf('| step | refusal `error.code` |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const inTable = rows.flatMap((row) =>
      [...row.split('|')[2]!.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!),
    );
    expect(inTable.length).toBeGreaterThanOrEqual(10);
    expect(inTable.filter((code) => !codes.includes(code))).toEqual([]);
  });
});
