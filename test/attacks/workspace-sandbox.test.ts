/**
 * Attack on run_command's sandbox (invariant 8): organism.workspace set to the data dir (or a
 * folder of its data) must not give an agent's commands the audit log, the signing key and the
 * stores. Such a config is refused at load, naming the setting; the default place
 * (<data_dir>/workspace) still loads and its commands see no file of the data dir.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { createToolRuntime, type ToolRuntime } from '../../src/tools/runtime.ts';

let runtime: ToolRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

async function organism(workspace: string) {
  const dir = await mkdtemp(join(tmpdir(), 'organism-ws-attack-'));
  const dataDir = join(dir, 'data');
  await mkdir(join(dataDir, 'kv'), { recursive: true });
  await writeFile(join(dataDir, 'secret.txt'), 'data-dir-secret');
  await writeFile(join(dataDir, 'kv', 'store.txt'), 'kv-secret');
  const file = join(dir, 'organism.yaml');
  await writeFile(
    file,
    `organism:\n  name: ws\n  data_dir: ./data\n  workspace: ${workspace}\n  log_level: silent\nlisteners:\n  - name: ops\n    agent: true\n    description: runs commands\n    tools: [run_command]\n    trust: high\n    tool_config:\n      run_command: { shell: true }\n`,
  );
  return { file, dataDir };
}

describe('run_command and a workspace in the data dir', () => {
  for (const workspace of ['./data', './data/kv', './data/']) {
    it(`workspace: ${workspace} is refused at load`, async () => {
      const { file } = await organism(workspace);
      await expect(loadConfig(file, { loadModules: false, env: process.env })).rejects.toThrow(
        /organism\.workspace .* is the data dir or a folder of its own data/,
      );
    });
  }

  it('the default place (data/workspace) loads, and its commands see no file of the data dir', async () => {
    const { file, dataDir } = await organism('./data/workspace');
    await mkdir(join(dataDir, 'workspace'), { recursive: true });
    const loaded = await loadConfig(file, { loadModules: false, env: process.env });
    runtime = await createToolRuntime(loaded, { warn: () => {}, env: { PATH: process.env.PATH } });
    const result = await runtime.dispatcher.call({
      tool: 'run_command',
      args: {
        command: `cat ${join(dataDir, 'secret.txt')} ${join(dataDir, 'kv', 'store.txt')}; ls -la ${dataDir}`,
      },
      listener: 'ops',
      thread: 't-ws',
    });
    expect(result.status).toBe('ok');
    const text = JSON.stringify(result);
    expect(text).not.toContain('data-dir-secret');
    expect(text).not.toContain('kv-secret');
  }, 60_000);
});
