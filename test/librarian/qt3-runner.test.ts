/**
 * The QT3 runner (bench/qt3, `npm run qt3`) on a made-up catalog in QT3's format
 * (qt3-fixture/, written for this test, not copied from QT3): through the real embedded store it
 * tallies a passing case, a failing one, a refused one, an error with another code and two that do
 * not apply, and without a checkout it says where to get QT3 and exits non-zero.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCatalog, readTestSet } from '../../bench/qt3/catalog.ts';
import { parseOptions, runQt3 } from '../../bench/qt3/main.ts';
import { prepare } from '../../bench/qt3/prepare.ts';

const FIXTURE = fileURLToPath(new URL('./qt3-fixture', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qt3-runner-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('QT3 runner on a tiny catalog', () => {
  it('tallies passed, failed, refused, any-code and not applicable per test set and in total', async () => {
    const lines: string[] = [];
    const log = join(dir, 'failures.jsonl');
    await runQt3({
      dir: FIXTURE,
      sets: ['tiny-*'],
      basex: false,
      log,
      timeoutMs: 2_000,
      write: (l) => lines.push(l),
    });
    const json = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const bySet = (set: string) => json.find((j) => j.name === 'qt3' && j.set === set);
    expect(bySet('tiny-basics')).toMatchObject({
      engine: 'embedded',
      cases: 11,
      passed: 9,
      failed: 1,
      refused: 1,
      not_applicable: 0,
      errors_any_code: 0,
      pass_rate: 81.8,
    });
    expect(bySet('tiny-limits')).toMatchObject({
      pass_rate: 0,
      cases: 4,
      passed: 0,
      failed: 1,
      not_applicable: 2,
      errors_any_code: 1,
    });
    expect(bySet('total')).toMatchObject({
      cases: 15,
      passed: 9,
      failed: 2,
      refused: 1,
      not_applicable: 2,
      errors_any_code: 1,
    });
    expect(json.find((j) => j.name === 'qt3_judge')?.note).toMatch(
      /evaluated by fontoxpath 3\.\d+\.\d+ directly/,
    );
    expect(lines).toContain('| tiny-basics | 11 | 11 | 9 | 1 | 1 | 0 | 81.8% |');

    // Every case that did not pass is logged with its outcome and why.
    const failures = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; outcome: string; why: string });
    expect(failures.map((f) => [f.name, f.outcome])).toEqual([
      ['tiny-fail-wrong-value', 'fail'],
      ['tiny-refused-window', 'refused'],
      ['tiny-na-xpath-only', 'not_applicable'],
      ['tiny-na-schema-import', 'not_applicable'],
      ['tiny-any-code', 'anycode'],
      ['tiny-fail-stopped', 'fail'],
    ]);
    expect(failures[0]!.why).toBe('assert-string-value b: got [A]');
    expect(failures[1]!.why).toBe('window clause');
    expect(failures[4]!.why).toMatch(/^expected error XPTY0004, got FORG0001/);
    // A query stopped at the time limit raised no XQuery error: not a pass on "any error".
    expect(failures[5]!.why).toMatch(/^expected error \*, got timeout: the query ran longer than 2000 ms/);
  });

  it('sets the environment up in the query: context item, params, namespaces not declared twice', () => {
    const catalog = readCatalog(FIXTURE);
    const cases = readTestSet(catalog, 'tiny-basics').cases;
    const own = prepare(cases.find((c) => c.name === 'tiny-pass-own-namespace')!, FIXTURE);
    expect(own.query).toBe(
      'declare namespace t = "urn:x-organism:qt3-fixture";\n' +
        'doc("/db/qt3/docs/items.xml") ! (\n string(t:items/t:item[2])\n)',
    );
    expect([...own.documents]).toEqual([['/db/qt3/docs/items.xml', join(FIXTURE, 'docs/items.xml')]]);
    const param = prepare(cases.find((c) => c.name === 'tiny-pass-xml')!, FIXTURE);
    expect(param.query).toMatch(/^declare variable \$n as xs:integer := 2;\n<list>/);
    // A param the query declares external gets its value in that declaration.
    const declared = prepare(cases.find((c) => c.name === 'tiny-pass-declared-param')!, FIXTURE);
    expect(declared.query).toBe("declare variable $p as xs:string := 'x';\n $p || '!'");
  });

  it('without a QT3 directory says where to get it and exits 2', () => {
    const run = spawnSync(process.execPath, ['bin/qt3.js'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('qt3: no QT3 directory given');
    expect(run.stderr).toContain('git clone https://github.com/w3c/qt3tests');
    expect(parseOptions([dir])).toBe(
      `qt3: ${dir} has no catalog.xml\n${(parseOptions([]) as string).split('\n').slice(1).join('\n')}`,
    );
  });
});
