/** GET /audit's reader: newest first, filtered, paged by byte cursor, through chunk boundaries. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryAudit } from '../../src/server/audit-query.ts';

async function auditFile(records: Record<string, unknown>[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-audit-query-'));
  const path = join(dir, 'audit.jsonl');
  await writeFile(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return path;
}

const call = (i: number, fields: Record<string, unknown> = {}) => ({
  type: 'call',
  n: i,
  tool: i % 3 === 0 ? 'calculate' : 'read_file',
  listener: i % 2 === 0 ? 'even' : 'odd',
  verdict: i % 5 === 0 ? 'deny' : i % 5 === 1 ? null : 'allow',
  // Some records far longer than a read chunk (64 KiB).
  input: i % 97 === 0 ? 'y'.repeat(150_000) : 'x',
  ...fields,
});

async function all(path: string, query: Omit<Parameters<typeof queryAudit>[1], 'cursor'>, maxScan?: number) {
  const seen: number[] = [];
  let cursor: number | undefined;
  let pages = 0;
  for (;;) {
    const page = await queryAudit(path, { ...query, ...(cursor !== undefined ? { cursor } : {}) }, maxScan);
    seen.push(...page.records.map((r) => r.n as number));
    pages++;
    if (page.next === null) return { seen, pages };
    cursor = Number(page.next);
  }
}

describe('queryAudit', () => {
  it('pages through every record newest first, whatever the page size', async () => {
    const records = Array.from({ length: 500 }, (_, i) => call(i));
    const path = await auditFile(records);
    const expected = records.map((r) => r.n).reverse();
    for (const limit of [1, 7, 100, 1000])
      expect((await all(path, { limit })).seen, `limit ${limit}`).toEqual(expected);
  });

  it('filters by tool, listener, verdict (none = unjudged) and type', async () => {
    const records = [
      ...Array.from({ length: 300 }, (_, i) => call(i)),
      { type: 'change', n: 300, action: 'thread.killed' },
    ];
    const path = await auditFile(records);
    const expect_ = (pick: (r: Record<string, unknown>) => boolean) =>
      records
        .filter(pick)
        .map((r) => r.n)
        .reverse();
    expect((await all(path, { limit: 13, tool: 'calculate', listener: 'odd' })).seen).toEqual(
      expect_((r) => r.tool === 'calculate' && r.listener === 'odd'),
    );
    expect((await all(path, { limit: 50, verdict: 'deny' })).seen).toEqual(
      expect_((r) => r.verdict === 'deny'),
    );
    expect((await all(path, { limit: 50, verdict: 'none' })).seen).toEqual(
      expect_((r) => r.type === 'call' && r.verdict === null),
    );
    expect((await all(path, { limit: 50, type: 'change' })).seen).toEqual([300]);
  });

  it('answers with a cursor to continue when one request has read enough', async () => {
    const records = Array.from({ length: 400 }, (_, i) => call(i, { input: 'z'.repeat(1000) }));
    const path = await auditFile(records);
    // Nothing matches: without the scan bound one request would read the whole file.
    const { seen, pages } = await all(path, { limit: 10, tool: 'nothing' }, 64 * 1024);
    expect(seen).toEqual([]);
    expect(pages).toBeGreaterThan(3);
  });

  it('has no records when the log does not exist yet', async () => {
    expect(await queryAudit('/nonexistent/audit.jsonl', { limit: 10 })).toEqual({ records: [], next: null });
  });
});
