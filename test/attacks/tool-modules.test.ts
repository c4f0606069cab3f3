/**
 * Attacks on the user's tool modules (`tool_modules:`, issue 17) through the CLI as a user runs it
 * (the compiled package, so .ts modules are compiled with esbuild): once the tools are signed, the
 * code that runs is the code that was signed. Neither the compiled copy kept in the project's
 * node_modules/.cache nor a module added after signing gets past the manifest.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/daemon.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const tool = (name: string, said: string) => `export default {
  name: '${name}',
  description: 'Answers with a fixed sentence, for the attack test.',
  args: { type: 'object', properties: {}, additionalProperties: false },
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run() {
    return { said: '${said}' };
  },
};
`;

async function project(grants = '[answer]'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-attack-tools-'));
  await mkdir(join(dir, 'tools'));
  await mkdir(join(dir, 'node_modules'), { mode: 0o755 });
  await writeFile(join(dir, 'tools/answer.ts'), tool('answer', 'as written'));
  await writeFile(
    join(dir, 'organism.yaml'),
    [
      'organism:',
      '  name: attack',
      '  data_dir: ./data',
      'tool_modules: [./tools]',
      'listeners:',
      '  - name: asker',
      `    handler: ${join(REPO_ROOT, 'listeners/printer.ts')}`,
      `    tools: ${grants}`,
      '',
    ].join('\n'),
  );
  return dir;
}

const callTool = (dir: string, name: string) =>
  runCli(['tools', 'call', name, '--as', 'asker', '--args', '{}', '--config', join(dir, 'organism.yaml')]);

describe('signed tool modules', () => {
  it('a compiled copy changed in node_modules/.cache does not run in place of the signed module', async () => {
    const dir = await project();
    const signed = await runCli(['tools', 'sign', '--config', join(dir, 'organism.yaml')]);
    expect(signed.code, signed.stderr).toBe(0);
    const first = await callTool(dir, 'answer');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).value).toEqual({ said: 'as written' });

    // Someone who can write the project's node_modules rewrites the compiled copies kept there, or
    // plants one the cache takes for the module's (its entry names the source as it is now).
    const cache = join(dir, 'node_modules', '.cache', 'organism');
    await mkdir(cache, { recursive: true });
    const compiled = (await readdir(cache)).filter((f) => f.endsWith('.mjs'));
    for (const file of compiled) await writeFile(join(cache, file), tool('answer', 'planted'));
    const source = join(dir, 'tools/answer.ts');
    await writeFile(join(cache, 'planted.mjs'), tool('answer', 'planted'));
    await writeFile(
      join(cache, `${sha256(source).slice(0, 16)}.json`),
      JSON.stringify({ module: 'planted.mjs', inputs: { [source]: sha256(await readFile(source, 'utf8')) } }),
    );

    const again = await callTool(dir, 'answer');
    expect(again.stdout).not.toContain('planted');
    expect(JSON.parse(again.stdout).value).toEqual({ said: 'as written' });
  }, 90_000);

  it('a module added after signing is refused', async () => {
    const dir = await project();
    expect((await runCli(['tools', 'sign', '--config', join(dir, 'organism.yaml')])).code).toBe(0);
    await writeFile(join(dir, 'tools/extra.ts'), tool('extra', 'unsigned'));
    const yaml = join(dir, 'organism.yaml');
    await writeFile(
      yaml,
      (await readFile(yaml, 'utf8')).replace('tools: [answer]', 'tools: [answer, extra]'),
    );
    const result = await callTool(dir, 'extra');
    expect(result.stdout).not.toContain('unsigned"');
    expect(JSON.parse(result.stdout).error).toMatchObject({ code: 'IntegrityFailure' });
  }, 90_000);
});
