/**
 * The package as a new user gets it: `npm run build`, `npm pack`, a fresh project, `npm install
 * <tarball>`, `npx organism init`, `npm install`; then the project's own `npm test` and `npx tsc
 * --noEmit` pass, and `npx organism run` carries a thread through the project's listener and a call
 * of the project's own tool, and two agents the test adds answer from their own scripts under
 * their own model names (listeners[].llm). The installs are --offline, from npm's cache (.ci/run
 * fills it with one install before the tests), so the test reaches nothing past loopback. Slow
 * (several npm installs), so one describe with one long timeout.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, localToken } from '../helpers/daemon.ts';
import { markedExamples } from '../helpers/doctest/parse.ts';
import { ok, packedPackage, sh, userEnv } from '../helpers/doctest/project.ts';

const NPM_INSTALL_FLAGS = ['--offline', '--no-audit', '--no-fund'];

/** `organism run` in `project` as its user would start it; `listening` is its address once it listens. */
function runProject(project: string): { child: ChildProcess; listening: Promise<string> } {
  // organism itself, not npx, so SIGTERM reaches the daemon and nothing is left running.
  const bin = join(project, 'node_modules/organism/bin/organism.js');
  const child = spawn(process.execPath, [bin, 'run', '--port', '0'], {
    cwd: project,
    env: userEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listening = new Promise<string>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`organism run exited ${code}:\n${output}`)));
  });
  return { child, listening };
}

describe('the packed package in a fresh project (npm pack, install, organism init)', () => {
  let work: string;
  let project: string;
  let daemon: ChildProcess | undefined;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'organism-package-'));
    project = join(work, 'my-organism');
    await mkdir(project);
    // Built if stale and packed once per run, shared with the doc-test (test/docs/doctest-*.test.ts).
    const { tarball, files: shipped } = await packedPackage();
    expect(shipped).toContain('dist/src/index.js');
    expect(shipped).toContain('dist/src/index.d.ts');
    expect(shipped).toContain('organism.schema.json');
    expect(shipped.filter((p) => /(^|\/)test\/|\.test\.[jt]s$/.test(p))).toEqual([]);

    // What a user does: a fresh project (npm's own `"type": "commonjs"` package.json included).
    await ok('npm', ['init', '-y'], project);
    await ok('npm', ['install', tarball, ...NPM_INSTALL_FLAGS], project);
    const init = await ok('npx', ['--no-install', 'organism', 'init'], project);
    expect(init.stdout).toContain('Next steps:');
    await ok('npm', ['install', ...NPM_INSTALL_FLAGS], project);
  }, 600_000);

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      const exited = new Promise((resolve) => daemon!.once('exit', resolve));
      daemon.kill('SIGTERM');
      await exited;
    }
    if (work) await rm(work, { recursive: true, force: true });
  }, 60_000);

  it('writes a "type": "module" package.json that keeps the tarball dependency', async () => {
    const pkg = JSON.parse(await readFile(join(project, 'package.json'), 'utf8'));
    expect(pkg.type).toBe('module');
    expect(pkg.dependencies.organism).toMatch(/^file:.*organism-.*\.tgz$/);
    expect(pkg.scripts).toMatchObject({
      start: 'organism run',
      test: 'vitest run',
      validate: 'organism validate',
    });
  });

  it("passes the project's own npm test (vitest with organism/testing)", async () => {
    const ran = await sh('npm', ['test'], project);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    // pretest: organism types, then tsc (the type test in test/hello.test.ts among what it checks).
    expect(ran.stdout).toContain('wrote organism-env.d.ts');
    expect(ran.stdout).toMatch(/Tests\s+.*4 passed/);
  }, 180_000);

  it('type-checks with the generated plain NodeNext tsconfig', async () => {
    const ran = await sh('npx', ['--no-install', 'tsc', '--noEmit'], project);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
  }, 180_000);

  it('types itself: a wrong payload field, a misspelled tool or peer fail npm test; an interface response compiles', async () => {
    const yaml = await readFile(join(project, 'organism.yaml'), 'utf8');
    const added = ['listeners/quote.ts', 'test/quote.test.ts', 'test/typo.test.ts'];
    const quote = (tool: string, peer: string) => `import { defineListener } from 'organism';

/** Declared as an interface: no index signature. */
export interface Quote {
  item: string;
  words: number;
}

export default defineListener<{ item: string }, Quote, 'quote'>({
  name: 'quote',
  description: 'Counts the words of an item.',
  payload: { tag: 'quote', schema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] } },
  response: { tag: 'quoted', schema: { type: 'object', properties: { item: { type: 'string' }, words: { type: 'integer' } } } },
  async handler(payload, ctx) {
    const counted = await ctx.tools.call('${tool}', { text: payload.item });
    if (counted.status !== 'ok' || counted.truncated) throw new Error('no count');
    if (payload.item === 'tell') await ctx.send('${peer}', { name: 'Ada' });
    return ctx.respond({ item: payload.item, words: counted.value.words });
  },
});
`;
    try {
      await writeFile(
        join(project, 'organism.yaml'),
        `${yaml}  - name: quote\n    handler: ./listeners/quote.ts\n    tools: [word_count]\n    peers: [hello]\n`,
      );
      await writeFile(join(project, 'listeners/quote.ts'), quote('word_count', 'hello'));
      await writeFile(
        join(project, 'test/quote.test.ts'),
        `import { testListener } from 'organism/testing';
import { expect, it } from 'vitest';
import quote from '../listeners/quote.js';
import wordCount from '../tools/word-count.js';

it('answers with its interface-typed response', async () => {
  const listener = await testListener(quote, { tools: [wordCount] });
  try {
    const replies = await listener.send({ item: 'two words' });
    expect(replies[0]?.payload).toEqual({ item: 'two words', words: 2 });
  } finally {
    await listener.close();
  }
});
`,
      );
      const passed = await sh('npm', ['test'], project);
      expect(passed.code, passed.stdout + passed.stderr).toBe(0);
      expect(passed.stdout).toMatch(/Tests\s+.*5 passed/);

      // A payload field hello's zod schema does not have: tsc refuses the test file, npm test fails.
      await writeFile(
        join(project, 'test/typo.test.ts'),
        `import { expect, it } from 'vitest';
import hello from '../listeners/hello.js';

it('has a typo', () => {
  const payload: Parameters<typeof hello.handler>[0] = { nam: 'Ada' };
  expect(payload).toBeDefined();
});
`,
      );
      const typo = await sh('npm', ['test'], project);
      expect(typo.code).not.toBe(0);
      expect(typo.stdout + typo.stderr).toMatch(
        /test\/typo\.test\.ts\(5,\d+\): error TS2561: .*'nam' does not exist in type '\{ name: string; \}'/,
      );
      await rm(join(project, 'test/typo.test.ts'));

      // A misspelled tool and a misspelled peer: type errors at their lines, npm test fails.
      await writeFile(join(project, 'listeners/quote.ts'), quote('word_cont', 'helo'));
      const misspelled = await sh('npm', ['test'], project);
      expect(misspelled.code).not.toBe(0);
      const out = misspelled.stdout + misspelled.stderr;
      expect(out).toMatch(
        /listeners\/quote\.ts\(15,\d+\): error TS2345: Argument of type '"word_cont"' is not assignable to parameter of type '"word_count"'/,
      );
      expect(out).toMatch(
        /listeners\/quote\.ts\(17,\d+\): error TS2345: Argument of type '"helo"' is not assignable to parameter of type '"hello"'/,
      );
    } finally {
      // The project as init wrote it for the tests after this one.
      await writeFile(join(project, 'organism.yaml'), yaml);
      await Promise.all(added.map((f) => rm(join(project, f), { force: true })));
      await ok('npx', ['--no-install', 'organism', 'types'], project);
    }
  }, 480_000);

  it("runs the docs' testing examples as written, and type-checks them, in the init project", async () => {
    // Marked `<!-- readme-example: test/x.test.ts -->` in README.md or docs/guide/ (testing.md).
    const examples = await markedExamples();
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) await writeFile(join(project, example.file), example.code);
    const files = examples.map((e) => e.file);
    const ran = await sh('npx', ['--no-install', 'vitest', 'run', ...files], project);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/Tests\s+.*\d+ passed/);
    expect(ran.stdout).not.toMatch(/failed/);
    const typed = await sh('npx', ['--no-install', 'tsc', '--noEmit'], project);
    expect(typed.code, typed.stdout + typed.stderr).toBe(0);
    // The project as init wrote it for the tests after this one.
    await Promise.all(files.map((f) => rm(join(project, f))));
  }, 240_000);

  it('validates, then runs a thread through the listener and a call of the project’s own tool', async () => {
    const validate = await sh('npx', ['--no-install', 'organism', 'validate'], project);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).toContain('ok: ./organism.yaml (1 listener)');

    const { child, listening } = runProject(project);
    daemon = child;
    const url = await listening;

    const sent = await sh(
      'npx',
      [
        '--no-install',
        'organism',
        'send',
        '--url',
        url,
        '--to',
        'hello',
        '<hello><name>Ada</name></hello>',
        '--wait',
      ],
      project,
    );
    expect(sent.code, sent.stdout + sent.stderr).toBe(0);
    const lines = sent.stdout.split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(/^api -> hello \[message\] <hello><name>Ada<\/name><\/hello>/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^hello -> word_count \[tool-call\] .*"text":"Hello, Ada!"/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^word_count -> hello \[tool-result\] .*<status>ok<\/status><result>\{"words":2\}/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^hello -> api \[response\] <greeting><text>Hello, Ada!<\/text><words>2<\/words><\/greeting>/,
      ),
    );

    // The same thread as the HTTP API keeps it.
    const thread = (JSON.parse(lines[0]!) as { thread: string }).thread;
    // With the local token the CLI found by itself, as a script on this machine would read it.
    const token = await localToken(join(project, '.organism'));
    const response = await fetch(`${url}/api/v1/threads/${thread}`, { headers: bearer(token) });
    expect(response.status).toBe(200);
    expect(JSON.stringify(await response.json())).toContain('word_count');

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);

  it('runs two agents added to the project, each with its own model and script', async () => {
    // What a user adds: two agents, each playing its own script (no key set) under its own model name.
    const script = (text: string) => `scripts:\n  - turns:\n      - text: "${text}"\n`;
    await mkdir(join(project, 'scripts'), { recursive: true });
    await writeFile(join(project, 'scripts/triage.yaml'), script('Triage: {{task}} is urgent.'));
    await writeFile(join(project, 'scripts/writer.yaml'), script('Writer: a reply to {{task}}.'));
    const yaml = await readFile(join(project, 'organism.yaml'), 'utf8');
    await writeFile(
      join(project, 'organism.yaml'),
      `${yaml}  - name: triage
    agent: true
    description: Sorts requests by urgency.
    llm: { model: triage-model, script: ./scripts/triage.yaml }
  - name: writer
    agent: true
    description: Drafts replies.
    llm: { model: writer-model, script: ./scripts/writer.yaml, temperature: 0.3 }
`,
    );
    const validate = await sh('npx', ['--no-install', 'organism', 'validate'], project);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).toContain('ok: ./organism.yaml (3 listeners)');

    const { child, listening } = runProject(project);
    daemon = child;
    const url = await listening;
    const ask = async (agent: string, task: string) => {
      const payload = `<${agent}><task>${task}</task></${agent}>`;
      const args = ['--no-install', 'organism', 'send', '--url', url, '--to', agent, payload, '--wait'];
      const sent = await sh('npx', args, project);
      expect(sent.code, sent.stdout + sent.stderr).toBe(0);
      return sent.stdout.split('\n').find((line) => line.startsWith(`${agent} -> api [response]`));
    };
    expect(await ask('triage', 'a broken login')).toContain(
      '<answer><text>Triage: a broken login is urgent.</text><status>done</status><turns>1</turns>' +
        '<backend>scripted/triage-model</backend></answer>',
    );
    expect(await ask('writer', 'a refund')).toContain(
      '<answer><text>Writer: a reply to a refund.</text><status>done</status><turns>1</turns>' +
        '<backend>scripted/writer-model</backend></answer>',
    );

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);
});
