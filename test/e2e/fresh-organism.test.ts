/**
 * A fresh organism: an organism.yaml alone in an empty folder, started with the real daemon. Its
 * data_dir and workspace do not exist until the daemon makes them, and the file tools work on the
 * first call: write_file into a new folder, list_dir with no arguments (path defaults to ".").
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DaemonProcess,
  REPO_ROOT,
  runCli,
  startDaemonProcess,
  useTool as useToolOf,
} from '../helpers/daemon.ts';

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

const useTool = (tool: string, args: unknown) => useToolOf(daemon.url, tool, args);

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

describe('organism tools call on a fresh organism (no daemon)', () => {
  let cli: string;
  let config: string;
  const password = 'Smtp-Pa55word-for-the-cli-test-7781';
  const env = { CLI_SMTP_PASSWORD: password };

  beforeAll(async () => {
    cli = await mkdtemp(path.join(os.tmpdir(), 'organism-fresh-cli-'));
    config = path.join(cli, 'organism.yaml');
    await writeFile(
      config,
      [
        'organism:',
        '  name: fresh-cli',
        'smtp:',
        '  host: 127.0.0.1',
        '  from: organism@example.com',
        '  user: organism',
        '  password_env: CLI_SMTP_PASSWORD',
        'listeners:',
        '  - name: toolbox',
        '    description: Calls one granted tool with JSON arguments.',
        `    handler: ${JSON.stringify(path.join(REPO_ROOT, 'listeners', 'toolbox.ts'))}`,
        '    tools: [write_file, read_file]',
        '',
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await rm(cli, { recursive: true, force: true });
  });

  const call = (tool: string, args: unknown) =>
    runCli(
      ['tools', 'call', tool, '--as', 'toolbox', '--config', config, '--args', JSON.stringify(args)],
      env,
    );

  it('creates the data_dir and workspace the call needs, as the daemon does', async () => {
    const { code, stdout, stderr } = await call('write_file', { path: 'a/b.txt', content: 'hello\n' });
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'ok', value: { path: 'a/b.txt', created: true } });
    expect((await stat(path.join(cli, '.organism'))).mode & 0o777).toBe(0o700);
    // The next call finds it (as root, in the workspace's volume, mounted for each call; else on disk).
    const read = await call('read_file', { path: 'a/b.txt' });
    expect(JSON.parse(read.stdout)).toMatchObject({ status: 'ok', value: { content: 'hello\n' } });
  });

  it('redacts the secrets the config names from what it prints, as the daemon does', async () => {
    await writeFile(
      path.join(cli, '.organism', 'workspace', 'leak.txt'),
      `pass: ${password.toUpperCase()}\n`,
    );
    const { code, stdout, stderr } = await call('read_file', { path: 'leak.txt' });
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'ok' });
    expect(stdout.toLowerCase()).not.toContain(password.toLowerCase().slice(0, 12));
    expect(stdout).toContain('[REDACTED]');
  });
});
