/**
 * A fresh organism: an organism.yaml alone in an empty folder, started with the real daemon. Its
 * data_dir and workspace do not exist until the daemon makes them, and the file tools work on the
 * first call: write_file into a new folder, list_dir with no arguments (path defaults to ".").
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';

let dir: string;
let daemon: DaemonProcess;
let before: string[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'organism-fresh-'));
  await writeFile(
    path.join(dir, 'organism.yaml'),
    [
      'organism:',
      '  name: fresh',
      'listeners:',
      '  - name: toolbox',
      '    description: Calls one granted tool with JSON arguments.',
      `    handler: ${JSON.stringify(path.join(REPO_ROOT, 'listeners', 'toolbox.ts'))}`,
      '    tools: [write_file, list_dir, read_file]',
      '',
    ].join('\n'),
  );
  before = await readdir(dir);
  daemon = await startDaemonProcess(['--config', path.join(dir, 'organism.yaml')]);
});

afterAll(async () => {
  await daemon?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Calls `tool` through the toolbox listener over the HTTP API and returns its answer. */
async function useTool(tool: string, args: unknown): Promise<{ status: string; result: unknown }> {
  const { code, stdout, stderr } = await runCli([
    'send',
    '--url',
    daemon.url,
    '--to',
    'toolbox',
    `<use-tool><tool>${tool}</tool><args>${JSON.stringify(args)}</args></use-tool>`,
    '--wait',
  ]);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  const answer = stdout.split('\n').find((line) => line.startsWith('toolbox -> api'));
  const status = /<status>([^<]*)<\/status>/.exec(answer ?? '')?.[1];
  const result = /<result>([^<]*)<\/result>/.exec(answer ?? '')?.[1]?.replaceAll('&quot;', '"');
  if (status === undefined || result === undefined) throw new Error(`no tool answer in:\n${stdout}`);
  return { status, result: JSON.parse(result) };
}

describe('a fresh organism', () => {
  it('creates its data_dir (private to its user) and its workspace at start', async () => {
    expect(before).toEqual(['organism.yaml']);
    const dataDir = await stat(path.join(dir, '.organism'));
    expect(dataDir.isDirectory()).toBe(true);
    expect(dataDir.mode & 0o777).toBe(0o700);
    expect((await stat(path.join(dir, '.organism', 'workspace'))).isDirectory()).toBe(true);
  });

  it('writes a file on the first call, folders included', async () => {
    expect(await useTool('write_file', { path: 'notes/hello.md', content: '# Hello\n' })).toMatchObject({
      status: 'ok',
      result: { path: 'notes/hello.md', created: true },
    });
    expect(await readFile(path.join(dir, '.organism', 'workspace', 'notes', 'hello.md'), 'utf8')).toBe(
      '# Hello\n',
    );
  });

  it('stops at start, naming the key, when data_dir cannot be created', async () => {
    // A file where a parent folder should be: no user, root included, can make the folder.
    await writeFile(path.join(dir, 'blocker'), '');
    const config = path.join(dir, 'blocked.yaml');
    await writeFile(
      config,
      (await readFile(path.join(dir, 'organism.yaml'), 'utf8')).replace(
        'organism:\n',
        'organism:\n  data_dir: blocker/data\n',
      ),
    );
    const { code, stderr } = await runCli(['run', '--port', '0', '--config', config]);
    expect(code).not.toBe(0);
    expect(stderr).toContain('organism.data_dir: cannot create');
    expect(stderr).toContain('ENOTDIR');
  });

  it('lists the workspace with list_dir {}', async () => {
    const answer = await useTool('list_dir', {});
    expect(answer).toMatchObject({ status: 'ok', result: { path: '.' } });
    expect((answer.result as { entries: { name: string }[] }).entries.map((e) => e.name)).toContain('notes');
  });
});
