/**
 * `tool_modules` in organism.yaml: a user's own tools, in their own project folder, add to the
 * built-in ones; `validate` and `run` load the same catalog and agree; the tools are signed and
 * verified like the built-in ones; a broken module is named with what is wrong.
 */
import { appendFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';

const INDEX = join(REPO_ROOT, 'src/index.ts');

const WORD_COUNT = `import type { ToolDefinition } from ${JSON.stringify(INDEX)};
import { words } from '../lib/words.ts';

const wordCount: ToolDefinition<{ text: string }, { words: number }> = {
  name: 'word_count',
  description: 'Counts the words in a text and returns how many there are.',
  args: {
    type: 'object',
    properties: { text: { type: 'string', maxLength: 10000 } },
    required: ['text'],
    additionalProperties: false,
  },
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run(args) {
    return { words: words(args.text) };
  },
};
export default wordCount;
`;

const HELPER = 'export const words = (text: string): number => text.split(/\\s+/).filter(Boolean).length;\n';

const COUNTER = `import { defineListener } from ${JSON.stringify(INDEX)};

export default defineListener<{ text: string }>({
  description: 'Counts the words of a text with the word_count tool and answers with the number.',
  payload: {
    tag: 'count',
    schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  response: { tag: 'counted', schema: { type: 'object', properties: { words: { type: 'integer' } } } },
  async handler(payload, ctx) {
    const result = await ctx.tools.call('word_count', { text: payload.text });
    if (result.status !== 'ok') throw new Error(result.error.message);
    return ctx.respond({ words: (result.value as { words: number }).words });
  },
});
`;

/** A user's project: organism.yaml granting word_count (and calculate, built in) to counter. */
async function project(grants = '[word_count, calculate]'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-tool-modules-'));
  await mkdir(join(dir, 'tools'));
  await mkdir(join(dir, 'lib'));
  await mkdir(join(dir, 'listeners'));
  await writeFile(join(dir, 'tools/word-count.ts'), WORD_COUNT);
  await writeFile(join(dir, 'lib/words.ts'), HELPER);
  await writeFile(join(dir, 'listeners/counter.ts'), COUNTER);
  await writeFile(
    join(dir, 'organism.yaml'),
    [
      'organism:',
      '  name: mine',
      '  data_dir: ./data',
      'tool_modules: [./tools]',
      'listeners:',
      '  - name: counter',
      '    handler: ./listeners/counter.ts',
      `    tools: ${grants}`,
      '',
    ].join('\n'),
  );
  return dir;
}

const callWordCount = (dir: string, text = 'one two three') =>
  runCli([
    'tools',
    'call',
    'word_count',
    '--as',
    'counter',
    '--args',
    JSON.stringify({ text }),
    '--config',
    join(dir, 'organism.yaml'),
  ]);

describe('tool_modules: the user’s own tools', () => {
  it('validate and run agree: a granted user tool is known to both, next to the built-in ones', async () => {
    const dir = await project();
    const config = join(dir, 'organism.yaml');
    const validate = await runCli(['validate', config]);
    expect(validate.stderr).toBe('');
    expect(validate.code).toBe(0);

    const list = await runCli(['tools', 'list', '--config', config]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^word_count +Counts the words/m);
    expect(list.stdout).toMatch(/^calculate +/m);

    const daemon = await startDaemonProcess(['--config', config]);
    try {
      const sent = await runCli([
        'send',
        '--url',
        daemon.url,
        '--to',
        'counter',
        '<count><text>a b c d</text></count>',
        '--wait',
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      // The tool call and its result are messages of the thread, then the listener's answer.
      expect(sent.stdout).toMatch(/word_count/);
      expect(sent.stdout).toMatch(/<counted>\s*<words>4<\/words>\s*<\/counted>/);
    } finally {
      await daemon.stop();
    }
  }, 60_000);

  it('a reload loads the tool modules again: an edited tool runs as edited, a broken one is refused and the old one kept', async () => {
    const dir = await project();
    const config = join(dir, 'organism.yaml');
    const tool = join(dir, 'tools/word-count.ts');
    const daemon = await startDaemonProcess(['--config', config]);
    const count = async () => {
      const sent = await runCli([
        'send',
        '--url',
        daemon.url,
        '--to',
        'counter',
        '<count><text>a b c d</text></count>',
        '--wait',
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      return /<words>(\d+)<\/words>/.exec(sent.stdout)?.[1];
    };
    try {
      expect(await count()).toBe('4');
      await writeFile(
        tool,
        (await readFile(tool, 'utf8')).replace('words: words(args.text)', 'words: 10 * words(args.text)'),
      );
      const reloaded = await runCli(['reload', '--url', daemon.url]);
      expect(reloaded.code, reloaded.stdout + reloaded.stderr).toBe(0);
      expect(await count()).toBe('40');

      await writeFile(join(dir, 'tools/broken.ts'), 'export default { name: "broken" };\n');
      const refused = await runCli(['reload', '--url', daemon.url]);
      expect(refused.code).toBe(1);
      expect(refused.stdout + refused.stderr).toContain(
        'tools/broken.ts: default export is not a ToolDefinition',
      );
      expect(await count()).toBe('40'); // still running, as it was
    } finally {
      await daemon.stop();
    }
  }, 90_000);

  it('validate refuses a grant of a tool nobody defines, with the same message run gives', async () => {
    const dir = await project('[word_cont]');
    const config = join(dir, 'organism.yaml');
    const validate = await runCli(['validate', config]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain(
      'listeners[0].tools[0]: unknown tool "word_cont" (did you mean word_count?)',
    );
    const run = await runCli(['run', '--port', '0', '--config', config]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'listeners[0].tools[0]: unknown tool "word_cont" (did you mean word_count?)',
    );
  }, 60_000);

  it('a broken module is named with what is wrong; run refuses to start cleanly', async () => {
    const dir = await project();
    const config = join(dir, 'organism.yaml');
    await writeFile(join(dir, 'tools/broken.ts'), 'export default { name: "broken" };\n');
    const bad = join(dir, 'tools/broken.ts');
    const validate = await runCli(['validate', config]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain(
      `tool_modules[0]: tool module ${bad}: default export is not a ToolDefinition`,
    );
    const run = await runCli(['run', '--port', '0', '--config', config]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`tool module ${bad}: default export is not a ToolDefinition`);
    expect(run.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace

    await writeFile(bad, 'export default {;\n');
    const syntax = await runCli(['validate', config]);
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toContain(`tool module ${bad}: does not load:`);
  }, 60_000);

  it('an entry that does not exist is named', async () => {
    const dir = await project();
    const config = join(dir, 'organism.yaml');
    await writeFile(config, (await readFile(config, 'utf8')).replace('[./tools]', '[./tools, ./more-tools]'));
    const validate = await runCli(['validate', config]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain(
      `tool_modules[1]: tool module ${join(dir, 'more-tools')}: is in tool_modules but cannot be read (ENOENT)`,
    );
  }, 30_000);

  it('a user tool may not take a built-in tool’s name', async () => {
    const dir = await project();
    await writeFile(
      join(dir, 'tools/calc.ts'),
      (await readFile(join(dir, 'tools/word-count.ts'), 'utf8')).replace(
        "name: 'word_count'",
        "name: 'calculate'",
      ),
    );
    const validate = await runCli(['validate', join(dir, 'organism.yaml')]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(
      /tool calculate: is registered twice \(first in .*tools\/calculate\.(ts|js)\)/,
    );
  }, 30_000);

  it('user tools are signed with the built-in ones; a changed tool or helper is refused', async () => {
    const dir = await project();
    const config = join(dir, 'organism.yaml');
    const signed = await runCli(['tools', 'sign', '--config', config]);
    expect(signed.code, signed.stderr).toBe(0);
    const manifest = JSON.parse(await readFile(join(dir, 'tools.manifest.json'), 'utf8'));
    expect(manifest.tools.word_count.module).toBe('tools/word-count.ts');
    expect(Object.keys(manifest.tools.word_count.imports)).toEqual(['lib/words.ts']);
    expect(manifest.tools.calculate).toBeDefined();

    const ok = await callWordCount(dir);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).value).toEqual({ words: 3 });

    await appendFile(join(dir, 'lib/words.ts'), '// changed\n');
    const refused = await callWordCount(dir);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'IntegrityFailure' });
    expect(JSON.parse(refused.stdout).error.message).toContain('lib/words.ts changed since it was signed');
  }, 60_000);
});
