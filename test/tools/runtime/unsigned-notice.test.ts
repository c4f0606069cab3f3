/**
 * The "no tool manifest" notice: only for an organism with tools of its own (tool_modules, or
 * another root), once per process (a reload does not repeat it), and never from `organism tools`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from '../../../src/cli/io.ts';
import { main } from '../../../src/cli/main.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { createToolRuntime } from '../../../src/tools/runtime.ts';
import { tableGuard } from './helpers.ts';
import { tempOrganism, toolModule } from './organism.ts';

/** Starts a tool runtime as the daemon does (the built-in tools plus tool_modules); its warnings. */
async function start(config: string): Promise<string[]> {
  const warnings: string[] = [];
  const runtime = await createToolRuntime(await loadConfig(config, { loadModules: false }), {
    guard: tableGuard(),
    warn: (m) => warnings.push(m),
    env: { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME },
  });
  await runtime.close();
  return warnings;
}

/** An organism with a tool of its own in `./mine`, granted to researcher. */
async function withOwnTool() {
  const o = await tempOrganism({
    tools: {},
    researcherTools: ['noop'],
    extraYaml: 'tool_modules: [./mine]\n',
  });
  await mkdir(join(o.dir, 'mine'));
  await writeFile(join(o.dir, 'mine', 'noop.ts'), toolModule('noop'));
  // A tool module may not lie in the workspace (the whole folder here): give it one of its own.
  await mkdir(join(o.dir, 'ws'));
  await writeFile(
    o.config,
    (await readFile(o.config, 'utf8')).replace('workspace: .\n', 'workspace: ./ws\n'),
  );
  return o;
}

describe('the unsigned notice', () => {
  it('is not given for an organism with only the built-in tools', async () => {
    const o = await tempOrganism({ tools: {}, researcherTools: ['calculate'] });
    expect(await start(o.config)).toEqual([]);
  });

  it('is given once for an organism with its own tools, not again on a reload', async () => {
    const o = await withOwnTool();
    const first = await start(o.config);
    expect(first).toHaveLength(1);
    expect(first[0]).toContain(`no tool manifest at ${join(o.dir, 'tools.manifest.json')}`);
    // A reload builds the runtime again in the same process.
    expect(await start(o.config)).toEqual([]);
  });

  it('is not given by `organism tools list`', async () => {
    const o = await withOwnTool();
    const io = captureIo();
    expect(await main(['tools', 'list', '--config', o.config], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/^noop +Test tool noop/m);
    expect(io.stderr.join('\n')).not.toContain('no tool manifest');
  });
});
