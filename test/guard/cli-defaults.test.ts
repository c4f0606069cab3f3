/**
 * `organism guard check` judges a call as the runtime does: with the tool's argument defaults
 * filled in first (list_dir's `path: "."`), so it agrees with a real call through the dispatcher.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createToolRuntime } from '../../src/tools/runtime.ts';
import { tempOrganism } from '../tools/runtime/organism.ts';

async function guardCheck(cases: unknown[]): Promise<Array<Record<string, unknown>>> {
  const io = captureIo(cases.map((c) => JSON.stringify(c)).join('\n'));
  expect(await main(['guard', 'check'], io)).toBe(0);
  return io.stdout.map((line) => JSON.parse(line));
}

describe('guard check fills argument defaults', () => {
  it('allows list_dir with {} as a real call does, and still judges given arguments as given', async () => {
    const o = await tempOrganism({ tools: {}, researcherTools: ['list_dir'] });
    await mkdir(join(o.dir, 'docs'));
    await writeFile(join(o.dir, 'docs', 'a.md'), 'a');

    const runtime = await createToolRuntime(await loadConfig(o.config, { loadModules: false }), {
      env: { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME },
      warn: () => {},
    });
    try {
      const real = await runtime.dispatcher.call({
        tool: 'list_dir',
        args: {},
        listener: 'researcher',
        thread: 't',
      });
      expect(real.status).toBe('ok');
    } finally {
      await runtime.close();
    }

    const [empty, outside] = await guardCheck([
      { tool: 'list_dir', args: {}, workspace: o.dir },
      { tool: 'list_dir', args: { path: '../elsewhere' }, workspace: o.dir },
    ]);
    expect(empty).toEqual({ verdict: 'allow', rule_id: null, reason: null, suggestion: null });
    expect(outside).toMatchObject({ verdict: 'deny' });
  });
});
