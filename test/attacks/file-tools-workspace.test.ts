/**
 * Attack on the file tools (invariant 8) when organism.workspace is the project folder itself (it
 * holds organism.yaml, .env and the data dir): an agent's read_file / list_dir must still not
 * return the .env's secrets, the config, or the data dir's audit log and signing key.
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

describe('file tools with the project folder as the workspace', () => {
  it("read_file and list_dir do not hand out .env, organism.yaml or the data dir's files", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-files-attack-'));
    await mkdir(join(dir, 'data'), { recursive: true });
    await writeFile(join(dir, 'data', 'audit.jsonl'), 'audit-line-secret\n');
    await writeFile(join(dir, '.env'), 'ATTACK_FILE_TOKEN=env-file-secret-Q9w8E7r6\n');
    await writeFile(join(dir, 'notes.txt'), 'ordinary notes');
    const file = join(dir, 'organism.yaml');
    await writeFile(
      file,
      `organism:\n  name: files\n  data_dir: ./data\n  workspace: .\n  log_level: silent\n# config-comment-secret\nlisteners:\n  - name: reader\n    agent: true\n    description: reads files\n    tools: [read_file, list_dir, write_file]\n`,
    );
    const loaded = await loadConfig(file, { loadModules: false, env: process.env });
    runtime = await createToolRuntime(loaded, { warn: () => {}, env: { PATH: process.env.PATH } });
    const call = (tool: string, args: unknown) =>
      runtime!.dispatcher.call({ tool, args, listener: 'reader', thread: 't-files' });

    // The control: an ordinary file in the workspace is read.
    expect(JSON.stringify(await call('read_file', { path: 'notes.txt' }))).toContain('ordinary notes');
    for (const path of ['.env', 'organism.yaml', 'data/audit.jsonl', join(dir, '.env'), './data/../.env']) {
      const text = JSON.stringify(await call('read_file', { path }));
      expect(text, path).not.toContain('env-file-secret');
      expect(text, path).not.toContain('config-comment-secret');
      expect(text, path).not.toContain('audit-line-secret');
    }
    const listing = JSON.stringify(await call('list_dir', { path: 'data' }));
    expect(listing).not.toContain('audit.jsonl');
    // Nor written: the audit log, the manifest, the config.
    for (const path of ['data/audit.jsonl', 'tools.manifest.json', 'organism.yaml']) {
      const written = await call('write_file', { path, content: 'x' });
      expect(written.status, path).toBe('refused');
    }
  }, 60_000);

  it('the default place (<data_dir>/workspace) is still the workspace: its files are read and written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-files-attack-'));
    await mkdir(join(dir, 'data', 'workspace'), { recursive: true });
    await writeFile(join(dir, 'data', 'audit.jsonl'), 'audit-line-secret\n');
    const file = join(dir, 'organism.yaml');
    await writeFile(
      file,
      `organism:\n  name: files\n  data_dir: ./data\n  workspace: ./data/workspace\n  log_level: silent\nlisteners:\n  - name: reader\n    agent: true\n    description: reads files\n    tools: [read_file, write_file]\n`,
    );
    const loaded = await loadConfig(file, { loadModules: false, env: process.env });
    runtime = await createToolRuntime(loaded, { warn: () => {}, env: { PATH: process.env.PATH } });
    const call = (tool: string, args: unknown) =>
      runtime!.dispatcher.call({ tool, args, listener: 'reader', thread: 't-files-2' });
    expect(await call('write_file', { path: 'mine.txt', content: 'hello' })).toMatchObject({ status: 'ok' });
    expect(JSON.stringify(await call('read_file', { path: 'mine.txt' }))).toContain('hello');
    const up = await call('read_file', { path: '../audit.jsonl' });
    expect(JSON.stringify(up)).not.toContain('audit-line-secret');
  }, 60_000);
});
