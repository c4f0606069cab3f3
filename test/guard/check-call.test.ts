import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCall, TOOL_GUARDS } from '../../src/guard/index.ts';
import type { GuardInput } from '../../src/guard/types.ts';

let ws: string;
let root: string;
beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'organism-checkcall-')));
  ws = path.join(root, 'ws');
  await mkdir(ws);
  await mkdir(path.join(root, 'other'));
  await symlink(path.join(root, 'other'), path.join(ws, 'out'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

const input = (tool: string, args: Record<string, unknown>, extra: Partial<GuardInput> = {}): GuardInput => ({
  tool,
  args,
  trust: 'medium',
  toolConfig: {},
  workspace: ws,
  ...extra,
});

describe('checkCall', () => {
  it('maps each native tool to its guard', () => {
    expect(TOOL_GUARDS).toEqual({
      run_command: 'shell',
      read_file: 'file',
      list_dir: 'file',
      write_file: 'file',
      fetch_url: 'web',
      webhook: 'web',
      send_email: 'email',
    });
  });

  it('shell: judges args.command with the trust level and tool_config', () => {
    expect(checkCall('shell', input('run_command', { command: 'git push -f' })).rule_id).toBe(
      'shell.git.push_force',
    );
    expect(
      checkCall('shell', input('run_command', { command: 'git push -f' }, { trust: 'high' })).verdict,
    ).toBe('warn');
    expect(checkCall('shell', input('run_command', { command: 'npm test' }, { trust: 'low' })).verdict).toBe(
      'deny',
    );
    expect(
      checkCall(
        'shell',
        input(
          'run_command',
          { command: 'npm test' },
          { trust: 'low', toolConfig: { allowed_commands: ['npm'] } },
        ),
      ).verdict,
    ).toBe('allow');
    expect(checkCall('shell', input('run_command', { command: 42 })).rule_id).toBe('shell.parse.empty');
  });

  it('shell: a working directory must pass the file guard', () => {
    expect(checkCall('shell', input('run_command', { command: 'ls', cwd: 'out' }))).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.symlink_escape',
    });
    expect(checkCall('shell', input('run_command', { command: 'ls', cwd: '.' })).verdict).toBe('allow');
  });

  it('file: reads for read_file and list_dir, writes for write_file', () => {
    expect(checkCall('file', input('read_file', { path: 'a.txt' })).verdict).toBe('allow');
    expect(checkCall('file', input('list_dir', { path: '/proc' })).rule_id).toBe('file.system_path');
    expect(checkCall('file', input('read_file', { path: '/etc/hosts' })).rule_id).toBe(
      'file.outside_workspace',
    );
    expect(checkCall('file', input('write_file', { path: '/etc/hosts' })).rule_id).toBe('file.system_write');
    expect(checkCall('file', input('read_file', { path: '.git/HEAD' }, { trust: 'high' })).verdict).toBe(
      'warn',
    );
    expect(checkCall('file', input('write_file', { path: '.git/HEAD' }, { trust: 'high' })).verdict).toBe(
      'deny',
    );
    expect(checkCall('file', input('read_file', { path: 'out/x' })).rule_id).toBe('file.symlink_escape');
  });

  it('file: honours allowed_paths from the tool_config', () => {
    const toolConfig = { allowed_paths: [`${root}/other/**`] };
    expect(checkCall('file', input('read_file', { path: `${root}/other/x` }, { toolConfig })).verdict).toBe(
      'allow',
    );
    expect(checkCall('file', input('read_file', { path: 'out/x' }, { toolConfig })).verdict).toBe('allow');
  });

  it('file: the verdict carries no resolved path, only verdict fields', () => {
    expect(Object.keys(checkCall('file', input('read_file', { path: '/etc/hosts' }))).sort()).toEqual([
      'reason',
      'rule_id',
      'segment',
      'suggestion',
      'verdict',
    ]);
  });

  it('file: refuses a missing or non-string path', () => {
    expect(checkCall('file', input('read_file', {})).rule_id).toBe('file.invalid_path');
    expect(checkCall('file', input('read_file', { path: ['a'] })).rule_id).toBe('file.invalid_path');
  });

  it('web: static checks only, no DNS', () => {
    expect(checkCall('web', input('fetch_url', { url: 'http://169.254.169.254/' })).rule_id).toBe(
      'web.metadata',
    );
    expect(checkCall('web', input('webhook', { url: 'https://hooks.example.com/x' })).verdict).toBe('allow');
    expect(checkCall('web', input('fetch_url', { url: 'https://does-not-exist.invalid/' })).verdict).toBe(
      'allow',
    );
    expect(checkCall('web', input('fetch_url', {})).rule_id).toBe('web.invalid_url');
  });

  it('email: recipients and header fields', () => {
    const toolConfig = { allowed_recipients: ['*@example.com'] };
    expect(
      checkCall(
        'email',
        input('send_email', { to: 'a@example.com', subject: 's', body: 'b' }, { toolConfig }),
      ).verdict,
    ).toBe('allow');
    expect(
      checkCall('email', input('send_email', { to: 'a@evil.com', subject: 's', body: 'b' }, { toolConfig }))
        .rule_id,
    ).toBe('email.recipient_not_allowed');
  });

  it('refuses an unknown guard kind', () => {
    expect(checkCall('nope' as 'shell', input('x', {})).rule_id).toBe('guard.unknown_kind');
  });
});
