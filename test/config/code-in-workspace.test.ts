/**
 * `organism validate` (bin/organism.js, as a user runs it) refuses the organism's code inside a
 * workspace, where every sandboxed program and the file tools can write: an agent's script, a
 * handler, a helper a handler imports and a tool module in organism.workspace, a script in a stdio
 * MCP server's workspace, and a handler reached through a link into the workspace. Each is named
 * with its file:line:col. A handler found there is not even loaded (its top-level code would run).
 * `organism run` refuses the same file the same way; the same code outside the workspace is fine.
 */
import { access, mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/daemon.ts';

const HANDLER = (marker: string) => `import { writeFileSync } from 'node:fs';
import { defineListener } from 'organism';
import { WORD } from './helper.js';
writeFileSync(${JSON.stringify(marker)}, 'loaded');
export default defineListener({
  description: 'Says a word.',
  payload: { tag: 'ask', schema: { type: 'object', properties: {} } },
  handler: (_payload: unknown, ctx: any) => ctx.respond({ word: WORD }),
});
`;
const TOOL = `export default {
  name: 'answer',
  description: 'Answers with a fixed word.',
  args: { type: 'object', properties: {}, additionalProperties: false },
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run() {
    return { said: 'yes' };
  },
};
`;
const SCRIPT = `scripts:\n  - turns:\n      - text: "hi"\n`;

/** A project whose code lives under `code` (a folder of the project, relative). */
async function project(code: string, link = false): Promise<{ dir: string; file: string; marker: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-code-ws-'));
  await mkdir(join(dir, 'node_modules'));
  await symlink(REPO_ROOT.replace(/\/$/, ''), join(dir, 'node_modules', 'organism'));
  const marker = join(dir, 'handler-ran');
  for (const folder of ['ws', 'mcp-ws', `${code}/tools`]) await mkdir(join(dir, folder), { recursive: true });
  await writeFile(join(dir, code, 'talker.ts'), HANDLER(marker));
  await writeFile(join(dir, code, 'helper.ts'), `export const WORD = 'word';\n`);
  await writeFile(join(dir, code, 'tools/answer.ts'), TOOL);
  await writeFile(join(dir, code, 'agent.yaml'), SCRIPT);
  await writeFile(join(dir, 'mcp-ws', 'other.yaml'), SCRIPT);
  // A link in the project to a helper kept in the workspace: the handler imports what a program can rewrite.
  let talker = `./${code}/talker.ts`;
  let more = '';
  if (link) {
    await mkdir(join(dir, 'ws', 'lib'));
    await writeFile(join(dir, 'ws', 'lib', 'talker.ts'), HANDLER(marker));
    await writeFile(join(dir, 'ws', 'lib', 'helper.ts'), `export const WORD = 'word';\n`);
    await symlink(join(dir, 'ws', 'lib', 'talker.ts'), join(dir, 'linked.ts'));
    // A handler of the project importing a helper kept in the workspace.
    await writeFile(
      join(dir, code, 'importer.ts'),
      HANDLER(marker).replace('./helper.js', '../ws/lib/helper.js'),
    );
    talker = `./${code}/importer.ts`;
    more = '  - name: linked\n    handler: ./linked.ts\n';
  }
  const file = join(dir, 'organism.yaml');
  await writeFile(
    file,
    `organism:
  name: code-in-ws
  workspace: ./ws
tool_modules: [./${code}/tools]
mcp_servers:
  - name: files
    command: /bin/cat
    workspace: ./mcp-ws
llm:
  backends:
    - { provider: scripted, name: other, script: ./mcp-ws/other.yaml }
listeners:
  - name: talker
    handler: ${talker}
  - name: agent
    agent: true
    description: Answers.
    llm: { script: ./${code}/agent.yaml }
${more}`,
  );
  return { dir, file, marker };
}

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

describe('organism validate: code inside a workspace', () => {
  it('refuses the handler and its helper, the tool module, the scripts, each at its line', async () => {
    const { dir, file, marker } = await project('ws/code');
    const { code, stdout, stderr } = await runCli(['validate', file]);
    expect(code, stdout + stderr).toBe(1);
    const lines = stderr.split('\n');
    const line = (at: string) => lines.find((l) => l.includes(`: ${at}: `)) ?? '';
    expect(line('tool_modules[0]')).toMatch(
      new RegExp(
        `^${file}:4:16: tool_modules\\[0\\]: the tool module ${dir}/ws/code/tools lies in organism.workspace \\(${dir}/ws\\)`,
      ),
    );
    expect(line('llm.backends[0].script')).toMatch(
      new RegExp(
        `^${file}:\\d+:\\d+: llm.backends\\[0\\].script: the script ${dir}/mcp-ws/other.yaml lies in the workspace of MCP server files`,
      ),
    );
    expect(line('listeners[0].handler')).toMatch(
      new RegExp(
        `^${file}:\\d+:\\d+: listeners\\[0\\].handler: the handler ${dir}/ws/code/talker.ts lies in organism.workspace`,
      ),
    );
    expect(line('listeners[1].llm.script')).toMatch(
      new RegExp(
        `^${file}:\\d+:\\d+: listeners\\[1\\].llm.script: the script ${dir}/ws/code/agent.yaml lies in organism.workspace`,
      ),
    );
    expect(line('listeners[0].handler')).toContain('sandboxed programs and the file tools can write');
    expect(stderr).toContain('4 problems found');
    expect(await exists(marker)).toBe(false);
  });

  it('refuses a handler linked from the workspace, and one importing a helper kept there', async () => {
    const { dir, file, marker } = await project('code', true);
    const { code, stderr } = await runCli(['validate', file]);
    expect(code, stderr).toBe(1);
    expect(stderr).toMatch(
      new RegExp(
        `${file}:\\d+:\\d+: listeners\\[0\\].handler: the handler ${dir}/code/importer.ts imports ${dir}/ws/lib/helper.ts, which lies in organism.workspace`,
      ),
    );
    expect(stderr).toMatch(
      new RegExp(
        `${file}:\\d+:\\d+: listeners\\[2\\].handler: the handler ${dir}/linked.ts lies in organism.workspace`,
      ),
    );
    expect(await exists(marker)).toBe(false);
  });

  it('organism run refuses it the same way, before it listens', async () => {
    const { file } = await project('ws/code');
    const { code, stdout, stderr } = await runCli(['run', '--config', file, '--port', '0']);
    expect(code, stdout + stderr).not.toBe(0);
    expect(stderr).toMatch(
      new RegExp(`${file}:\\d+:\\d+: listeners\\[1\\].llm.script: the script .* lies in organism.workspace`),
    );
    expect(stdout + stderr).not.toMatch(/listening on/);
  });

  it('takes the same code outside the workspaces (the MCP server left out)', async () => {
    const { file } = await project('code');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('script: ./mcp-ws/other.yaml', 'script: ./code/agent.yaml'));
    const { code, stdout, stderr } = await runCli(['validate', file]);
    expect(code, stdout + stderr).toBe(0);
    expect(stdout).toContain('(2 listeners)');
  });
});
