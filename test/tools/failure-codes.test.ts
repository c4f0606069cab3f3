/** The runtime's tool-result codes are named once (src/tools/failure-codes.ts), and the README lists each. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TOOL_FAILURE_CODES } from '../../src/tools/failure-codes.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const codes = Object.keys(TOOL_FAILURE_CODES);

describe('tool-result codes', () => {
  it('the README names every code the runtime gives', () => {
    expect(codes.filter((code) => !README.includes(`\`${code}\``))).toEqual([]);
  });

  it("every code in the README's dispatcher table is one of them", () => {
    const table = README.slice(README.indexOf('| step | refusal `error.code` |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const inTable = rows.flatMap((row) =>
      [...row.split('|')[2]!.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!),
    );
    expect(inTable.length).toBeGreaterThanOrEqual(10);
    expect(inTable.filter((code) => !codes.includes(code))).toEqual([]);
  });
});
