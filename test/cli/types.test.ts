/**
 * `organism types` with the real CLI on a TypeScript project: the file it writes makes
 * ctx.tools.call accept only the listener's granted tools (their argument and result types) and
 * ctx.send only its peers (their payload types); a misspelled tool, peer or listener name is a
 * tsc error. Without the file, the same code compiles as loosely as before.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.ts';
import { tsProject, typecheck } from './types-support/project.ts';

const YAML = `organism:
  name: typed
tool_modules: [./tools]
listeners:
  - name: hello
    handler: ./listeners/hello.ts
    tools: [word_count, calculate]
    peers: [shouter]
  - name: shouter
    handler: ./listeners/shouter.ts
`;

const WORD_COUNT = `import { defineTool } from 'organism';
import { z } from 'zod';

export default defineTool({
  name: 'word_count',
  description: 'Counts the words in a text.',
  args: z.object({ text: z.string(), min: z.number().default(0) }),
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run(args) {
    return { words: args.text.split(' ').length };
  },
});
`;

const SHOUTER = `import { defineListener } from 'organism';
import { z } from 'zod';

export default defineListener({
  name: 'shouter',
  description: 'Shouts the text back.',
  payload: { tag: 'shout', schema: z.object({ text: z.string(), loud: z.boolean().optional() }) },
  handler: (payload, ctx) => ctx.respond(payload.text.toUpperCase()),
});
`;

/** hello: a listener that uses its grants and its peer correctly. */
const HELLO = `import { defineListener } from 'organism';

export default defineListener({
  name: 'hello',
  description: 'Greets.',
  payload: { tag: 'hello', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  async handler(payload, ctx) {
    const counted = await ctx.tools.call('word_count', { text: payload.name });
    if (counted.status !== 'ok' || counted.truncated) return;
    const words: number = counted.value.words;
    await ctx.tools.call('calculate', { expression: '1 + 1' });
    return ctx.send('shouter', { text: \`\${payload.name} \${words}\` });
  },
});
`;

/** The same listener with one mistake per line (line numbers asserted below). */
const MISTAKES = `import { defineListener } from 'organism';

export default defineListener({
  name: 'hello',
  payload: { tag: 'hello', schema: { type: 'object' } },
  async handler(_payload, ctx) {
    await ctx.tools.call('word_cont', { text: 'a' });
    await ctx.tools.call('word_count', { text: 1 });
    await ctx.send('shoutr', { text: 'a' });
    await ctx.send('shouter', { txt: 'a' });
    const r = await ctx.tools.call('word_count', { text: 'a' });
    if (r.status === 'ok' && !r.truncated) r.value.lines;
  },
});
`;

describe('organism types', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tsProject({
      'organism.yaml': YAML,
      'tools/word-count.ts': WORD_COUNT,
      'listeners/hello.ts': HELLO,
      'listeners/shouter.ts': SHOUTER,
    });
  }, 60_000);

  it('writes organism-env.d.ts beside organism.yaml; the project compiles with it', async () => {
    const { code, stdout, stderr } = await runCli(['types', '--config', join(dir, 'organism.yaml')]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('organism-env.d.ts');
    const text = await readFile(join(dir, 'organism-env.d.ts'), 'utf8');
    expect(text).toContain("declare module 'organism'");
    expect(text).toContain('typeof import("./tools/word-count.js").default');
    const checked = typecheck(dir);
    expect(checked.out).toBe('');
    expect(checked.code).toBe(0);
  }, 120_000);

  it('a misspelled tool or peer, wrong arguments, payload or result field are tsc errors at their lines', async () => {
    await writeFile(join(dir, 'listeners/mistakes.ts'), MISTAKES);
    try {
      const { code, errors } = typecheck(dir);
      expect(code).not.toBe(0);
      const at = (line: number) => errors.filter((e) => e.startsWith(`listeners/mistakes.ts(${line},`));
      expect(at(7).join('\n')).toMatch(
        /TS2345: Argument of type '"word_cont"' is not assignable to parameter of type '("calculate" \| "word_count"|"word_count" \| "calculate")'/,
      );
      expect(at(8).join('\n')).toMatch(/TS2322: Type 'number' is not assignable to type 'string'/);
      expect(at(9).join('\n')).toMatch(
        /TS2345: Argument of type '"shoutr"' is not assignable to parameter of type '"shouter"'/,
      );
      expect(at(10).join('\n')).toMatch(/'txt' does not exist/);
      expect(at(12).join('\n')).toMatch(/Property 'lines' does not exist on type '\{ words: number; \}'/);
      expect(errors.filter((e) => !e.startsWith('listeners/mistakes.ts('))).toEqual([]);
    } finally {
      await rm(join(dir, 'listeners/mistakes.ts'));
    }
  }, 120_000);

  it('a listener name organism.yaml does not have is a tsc error; a module without a name stays loose', async () => {
    await writeFile(join(dir, 'listeners/misnamed.ts'), HELLO.replace("name: 'hello'", "name: 'helo'"));
    // Given types and no name: any tool, as before (not the types of some listener of organism.yaml).
    await writeFile(
      join(dir, 'listeners/unnamed.ts'),
      `import { defineListener } from 'organism';
export default defineListener<{ id: string }, { ok: boolean }>({
  payload: { tag: 'u', schema: { type: 'object' } },
  async handler(payload, ctx) {
    await ctx.tools.call('key_value_set', { key: payload.id });
    return ctx.respond({ ok: true });
  },
});
`,
    );
    try {
      const { errors } = typecheck(dir);
      expect(errors.filter((e) => e.startsWith('listeners/unnamed.ts'))).toEqual([]);
      expect(errors.join('\n')).toMatch(
        /listeners\/misnamed\.ts\(4,\d+\): error TS2820: Type '"helo"' is not assignable to type '"hello" \| "shouter" \| undefined'\. Did you mean '"hello"'\?/,
      );
    } finally {
      await rm(join(dir, 'listeners/misnamed.ts'));
      await rm(join(dir, 'listeners/unnamed.ts'));
    }
  }, 120_000);

  it('without the file, the same mistakes compile as before (names are any string)', async () => {
    await writeFile(join(dir, 'listeners/mistakes.ts'), MISTAKES.replace('r.value.lines', 'r.value'));
    await rm(join(dir, 'organism-env.d.ts'), { force: true });
    try {
      const { errors } = typecheck(dir);
      expect(errors.filter((e) => e.startsWith('listeners/mistakes.ts'))).toEqual([]);
      // Only hello's use of the result's type needs the file (a result's value is unknown without it).
      expect(errors).toEqual([
        expect.stringContaining(
          "listeners/hello.ts(10,27): error TS18046: 'counted.value' is of type 'unknown'",
        ),
      ]);
    } finally {
      await rm(join(dir, 'listeners/mistakes.ts'));
    }
  }, 120_000);

  it('--out writes elsewhere; a bad organism.yaml is reported as validate reports it', async () => {
    const out = join(dir, 'types/env.d.ts');
    const written = await runCli(['types', '--config', join(dir, 'organism.yaml'), '--out', out]);
    expect(written.code).toBe(0);
    expect(await readFile(out, 'utf8')).toContain('"hello": {');
    await writeFile(join(dir, 'bad.yaml'), YAML.replace('peers: [shouter]', 'peers: [shoutr]'));
    const bad = await runCli(['types', '--config', join(dir, 'bad.yaml')]);
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toMatch(/bad\.yaml:8:\d+: .*shoutr/);
  }, 60_000);
});
