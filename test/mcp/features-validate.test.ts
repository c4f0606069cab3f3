/**
 * prompt_modules and resource_modules are the organism's code: `organism validate` loads and checks
 * them as the MCP server will (each problem at its entry's line), refuses them inside the
 * workspace, and the file guard's set of code files holds them (a folder whole), so no file tool
 * writes them and `organism dev` watches them.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { organismCodeFiles } from '../../src/tools/code-files.ts';
import { REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';

const ENTRY = JSON.stringify(join(REPO_ROOT, 'src/index.ts'));
const UPPER = JSON.stringify(join(REPO_ROOT, 'test/mcp/fixtures/upper.ts'));

async function project(prompts: Record<string, string>, resources: Record<string, string>, extra = '') {
  const dir = await mkdtemp(join(tmpdir(), 'organism-features-validate-'));
  await mkdir(join(dir, 'prompts'));
  await mkdir(join(dir, 'resources'));
  for (const [name, text] of Object.entries(prompts)) await writeFile(join(dir, 'prompts', name), text);
  for (const [name, text] of Object.entries(resources)) await writeFile(join(dir, 'resources', name), text);
  const file = join(dir, 'organism.yaml');
  await writeFile(
    file,
    `organism:
  name: features-validate
  data_dir: ./data
  workspace: ./workspace
prompt_modules: [./prompts]
resource_modules: [./resources]
listeners:
  - name: upper
    handler: ${UPPER}
${extra}`,
  );
  return { dir, file };
}

const good = `import { definePrompt } from ${ENTRY};
export default definePrompt({ name: 'hello', description: 'Says hello', get: () => 'hello' });
`;

describe('organism validate and the project prompts and resources', () => {
  it('ok for modules that load', async () => {
    const { file } = await project(
      { 'hello.ts': good },
      {
        'doc.ts': `import { defineResource } from ${ENTRY};
export default defineResource({ uri: 'docs://readme', name: 'readme', read: () => 'text' });
`,
      },
    );
    const ran = await runCli(['validate', '--config', file]);
    expect(ran.stderr + ran.stdout).toContain('ok:');
    expect(ran.code).toBe(0);
  });

  it('each problem at its entry: no get, a name given twice, uri and uriTemplate both, a template without a variable', async () => {
    const { file } = await project(
      { 'c.ts': `export default { name: 'c', description: 'x' };\n` },
      {
        'r.ts': `export default [
  { name: 'both', uri: 'x://a', uriTemplate: 'x://{a}', read: () => '' },
];
`,
      },
    );
    const ran = await runCli(['validate', '--config', file]);
    expect(ran.code).toBe(1);
    const out = ran.stdout + ran.stderr;
    expect(out).toMatch(
      /organism\.yaml:5:\d+: prompt_modules\[0\]: module .*c\.ts: default export is not a prompt/,
    );
    expect(out).toMatch(
      /resource_modules\[0\]: module .*r\.ts: resource both: give exactly one of uri and uriTemplate/,
    );

    const twice = await project(
      { 'a.ts': good, 'b.ts': good },
      {
        't.ts': `export default { name: 't', uriTemplate: 'x://fixed', read: () => '' };\n`,
      },
    );
    const again = await runCli(['validate', '--config', twice.file]);
    const said = again.stdout + again.stderr;
    expect(again.code).toBe(1);
    expect(said).toMatch(/prompt_modules\[0\]: module .*b\.ts: prompt hello is also declared in .*a\.ts/);
    expect(said).toMatch(/resource t: uriTemplate x:\/\/fixed has no \{variable\}; use uri/);
  });

  it('refuses prompt modules inside the workspace, as it does tool modules', async () => {
    const { file, dir } = await project({ 'hello.ts': good }, {});
    await mkdir(join(dir, 'workspace', 'prompts'), { recursive: true });
    await writeFile(join(dir, 'workspace', 'prompts', 'hello.ts'), good);
    await writeFile(
      file,
      (await import('node:fs')).readFileSync(file, 'utf8').replace('[./prompts]', '[./workspace/prompts]'),
    );
    const ran = await runCli(['validate', '--config', file]);
    expect(ran.code).toBe(1);
    expect(ran.stdout + ran.stderr).toMatch(
      /prompt_modules\[0\]: the prompt module .* lies in organism\.workspace/,
    );
  });

  it("the file guard's code set holds both folders whole and the modules in them", async () => {
    const { dir } = await project({ 'hello.ts': good }, { 'doc.ts': 'export default {};\n' });
    const code = await organismCodeFiles({
      listeners: [],
      tool_modules: [],
      llm: { backends: [] } as never,
      prompt_modules: [join(dir, 'prompts')],
      resource_modules: [join(dir, 'resources')],
    });
    expect(code.folders.get(join(dir, 'prompts'))).toBe('a prompt_modules folder');
    expect(code.folders.get(join(dir, 'resources'))).toBe('a resource_modules folder');
    expect(code.files.get(join(dir, 'prompts', 'hello.ts'))).toBe('a prompt module');
  });
});

describe('a reload', () => {
  it('loads the prompt modules again: a prompt added to the folder is offered after organism reload', async () => {
    const { file, dir } = await project({ 'hello.ts': good }, {});
    const daemon = await startDaemonProcess(['--config', file]);
    const names = async () => {
      const client = new Client({ name: 'reload-test', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
          requestInit: { headers: daemon.headers() },
        }),
      );
      try {
        return (await client.listPrompts()).prompts.map((p) => p.name);
      } finally {
        await client.close();
      }
    };
    try {
      expect(await names()).toEqual(['hello']);
      await writeFile(join(dir, 'prompts', 'later.ts'), good.replaceAll('hello', 'later'));
      const reloaded = await runCli(['reload', '--config', file]);
      expect(reloaded.code, reloaded.stderr).toBe(0);
      expect(await names()).toEqual(['hello', 'later']);
    } finally {
      await daemon.stop();
    }
  }, 60_000);
});
