/**
 * The docs run, shared by the test files that each run a shard of it (test/docs/doctest-{1,2,3}.test.ts):
 * every block of README.md and docs/guide/*.md as its reader would type it, in a project made by
 * `organism init` from the packed package (parse.ts reads the blocks, project.ts makes the project
 * once per file and resets it per page, run.ts runs a page against its own daemon). One describe
 * per page, one test per block, named by page and line; a failure prints the command's output and
 * the daemon's log. Fixture pages under test/fixtures/doctest/ show the runner passing a good page
 * and failing a broken one where it is broken.
 *
 * Page i of docPages() goes to shard i mod N: a page added to docs/guide/ is run by some shard
 * with no list to keep, and the shards run side by side in vitest's workers instead of one file of
 * four minutes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DocBlock, docPages, readPage } from './parse.ts';
import { DocProject, packedPackage } from './project.ts';
import { type BlockResult, blockTimeout, PageRun } from './run.ts';

export interface DocShard {
  /** This file's shard, 0-based. */
  shard: number;
  /** How many shards the pages are dealt to. */
  of: number;
  /** Also run the runner's own checks on its fixture pages (in one shard only). */
  runnerChecks?: boolean;
}

let project: DocProject | undefined;

/** Describes this shard's pages (and the runner's checks), each in the file's one project. */
export async function describeDocShard({ shard, of, runnerChecks = false }: DocShard): Promise<void> {
  const started = Date.now();
  beforeAll(async () => {
    project = await DocProject.create(await packedPackage());
  }, 600_000);
  afterAll(async () => {
    await project?.remove();
    // The shard's whole wall time (the install included), for the CI log.
    console.log(`doctest ${shard + 1} of ${of}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 60_000);
  if (runnerChecks) describeRunner();
  const pages = (await docPages()).filter((_, i) => i % of === shard);
  for (const page of pages) await describePage(page);
}

/** A short name for a block: its page and line, what it is, and its first line. */
function title(block: DocBlock): string {
  const first = block.code.split('\n').find((l) => l.trim() && !l.trim().startsWith('#')) ?? '';
  const what = block.kind === 'file' || block.kind === 'test' ? `${block.kind} ${block.path}` : block.kind;
  return `${block.page}:${block.line} ${what}: ${first.trim().slice(0, 70)}`;
}

/** The runnable blocks of `page`, one after the other, against one daemon. */
async function describePage(page: string): Promise<void> {
  const blocks = (await readPage(page)).filter((b) => b.kind !== 'shown');
  if (blocks.length === 0) return;
  describe(page, () => {
    let run: PageRun;
    beforeAll(async () => {
      await project!.reset();
      run = new PageRun(project!);
    });
    afterAll(() => run?.close(), 30_000);
    for (const block of blocks) {
      it(
        title(block),
        async () => {
          const result = await run.run(block);
          if (!result.ok) throw new Error(result.message);
        },
        blockTimeout(),
      );
    }
  });
}

/** All blocks of a fixture page run through the runner, each with its result. */
async function runFixture(name: string): Promise<Array<{ block: DocBlock; result: BlockResult }>> {
  await project!.reset();
  const run = new PageRun(project!);
  const results = [];
  try {
    for (const block of await readPage(`test/fixtures/doctest/${name}`)) {
      results.push({ block, result: await run.run(block) });
    }
  } finally {
    await run.close();
  }
  return results;
}

/** The runner's own checks on its fixture pages: right where a page is right, failing where it is broken. */
function describeRunner(): void {
  describe('the doc-test runner', () => {
    it('passes a page whose every block is right (commands, files, restarts, types, yaml, a test)', async () => {
      const results = await runFixture('good.md');
      const failed = results.filter((r) => !r.result.ok).map((r) => r.result.message);
      expect(failed).toEqual([]);
      const kinds = results.map((r) => r.block.kind);
      for (const kind of ['sh', 'file', 'ts', 'yaml', 'test', 'shown'] as const)
        expect(kinds).toContain(kind);
    }, 600_000);

    it('fails a broken page at each broken block, naming page and line, with the output', async () => {
      const results = await runFixture('broken.md');
      const failures = results.filter((r) => !r.result.ok).map((r) => r.result.message);
      const page = 'test/fixtures/doctest/broken.md';
      // The wrong flag: the command, its exit and what the CLI said about it.
      expect(failures).toContainEqual(
        expect.stringMatching(new RegExp(`^${page}:5: \`\`\`sh block exited 1\\n`)),
      );
      expect(failures.find((m) => m.startsWith(`${page}:5:`))).toMatch(/--too[\s\S]*too/);
      // The wrong key in a piece of organism.yaml, at the key's own line.
      expect(failures).toContainEqual(
        expect.stringContaining(`${page}:14:3: server.prot: unknown key 'prot'`),
      );
      // The whole organism.yaml with a wrong key: refused where it is written, and the daemon that
      // would run it does not start for the next command.
      expect(failures).toContainEqual(
        expect.stringContaining(`${page}:23:1: listners: unknown key 'listners'`),
      );
      expect(failures).toContainEqual(
        expect.stringContaining(
          `${page}:28: the daemon did not start with organism.yaml as written at ${page}:20`,
        ),
      );
      // The misspelled option of a TypeScript block, at its line in the page.
      expect(failures).toContainEqual(
        expect.stringMatching(new RegExp(`${page}:39:\\d+: error TS\\d+: .*descripton`)),
      );
      expect(failures).toHaveLength(5);
    }, 600_000);
  });
}
