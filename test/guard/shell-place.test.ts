/**
 * The shell guard with a place: a real workspace on disk, run_command's cwd and `shell: true`.
 * Globs are expanded against the disk, symlinks followed, and the trees recursive readers walk
 * looked into, which the text-only corpus cannot show.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCall } from '../../src/guard/index.ts';
import { checkShell } from '../../src/guard/shell/index.ts';
import type { Verdict } from '../../src/guard/types.ts';

let root: string;
let ws: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'organism-shell-place-')));
  ws = path.join(root, 'ws');
  await mkdir(path.join(ws, 'keys'), { recursive: true });
  await mkdir(path.join(ws, 'app', 'config'), { recursive: true });
  await mkdir(path.join(ws, 'src'), { recursive: true });
  await mkdir(path.join(root, 'outside'), { recursive: true });
  await writeFile(path.join(ws, 'keys', 'id_rsa'), 'key');
  await writeFile(path.join(ws, 'app', 'config', '.env'), 'PASSWORD=x');
  await writeFile(path.join(ws, 'src', 'a.ts'), 'TODO');
  await writeFile(path.join(root, 'outside', '.env'), 'PASSWORD=y');
  await symlink(path.join(root, 'outside', '.env'), path.join(ws, 'notes.txt'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

const judge = (
  command: string,
  opts: { shell?: boolean; cwd?: string; trust?: 'low' | 'medium' | 'high' } = {},
) => {
  const v: Verdict = checkCall('shell', {
    tool: 'run_command',
    args: { command, ...(opts.cwd ? { cwd: opts.cwd } : {}) },
    trust: opts.trust ?? 'medium',
    toolConfig: opts.shell ? { shell: true } : {},
    workspace: ws,
  });
  return { verdict: v.verdict, rule_id: v.rule_id };
};
const denied = (rule: string) => ({ verdict: 'deny', rule_id: `shell.filesystem.${rule}` });
const allowed = { verdict: 'allow', rule_id: null };

describe('shell guard with a place: globs expanded in shell mode', () => {
  it('judges what a glob matches on disk when the line runs through a shell', () => {
    expect(judge('cat keys/*', { shell: true })).toEqual(denied('read_secrets'));
    expect(judge('head -c 60 k*/i*', { shell: true })).toEqual(denied('read_secrets'));
    expect(judge('cat ../ws/keys/?d_rsa', { shell: true })).toEqual(denied('read_secrets'));
    // Without a shell nothing expands it: `keys/*` is a file of that name.
    expect(judge('cat keys/*')).toEqual(allowed);
    // The same text with no place known cannot be expanded: only what the name could be counts.
    expect(checkShell('cat keys/*', 'medium', { shell: true })).toMatchObject(allowed);
    expect(judge('cat src/*', { shell: true })).toEqual(allowed);
  });

  it('judges a glob that could name a secret even when nothing matches it now', () => {
    expect(judge('cat ../../.en?', { shell: true })).toEqual(denied('read_secrets'));
    expect(judge('cat /etc/shado[w]', { shell: true })).toEqual(denied('read_secrets'));
    expect(judge('cat nothing-here/.en?', { shell: true })).toEqual(denied('read_secrets'));
  });
});

describe('shell guard with a place: paths', () => {
  it('follows symlinks of existing paths to the file they name', () => {
    expect(judge('cat notes.txt')).toEqual(denied('read_secrets'));
    expect(checkShell('cat notes.txt', 'medium')).toMatchObject(allowed);
  });

  it('takes relative paths against run_command cwd', () => {
    expect(judge('cat ../keys/id_rsa', { cwd: 'src' })).toEqual(denied('read_secrets'));
    expect(judge('cat a.ts', { cwd: 'src' })).toEqual(allowed);
    expect(judge('cd .. && cat keys/id_rsa', { cwd: 'src' })).toEqual(denied('read_secrets'));
  });
});

describe('shell guard with a place: recursive readers', () => {
  it('looks into the tree a recursive read walks inside the workspace', () => {
    expect(judge('grep -r PASSWORD .')).toEqual(denied('recursive_read_secrets'));
    expect(judge('grep -rn PASSWORD app')).toEqual(denied('recursive_read_secrets'));
    expect(judge('rg --hidden PASSWORD')).toEqual(denied('recursive_read_secrets'));
    expect(judge('find . -type f -exec cat {} +')).toEqual(denied('recursive_read_secrets'));
    expect(judge('grep -r TODO src')).toEqual(allowed);
    expect(judge('grep -r TODO .', { cwd: 'src' })).toEqual(allowed);
  });

  it('honours what the reader leaves out: --exclude, rg skipping dot files', () => {
    expect(judge('grep -r --exclude=.env --exclude=id_rsa PASSWORD .')).toEqual(allowed);
    expect(judge('rg PASSWORD app')).toEqual(allowed);
  });

  it('counts any tree above the workspace, wherever cwd is', () => {
    expect(judge('grep -r PASSWORD ..')).toEqual(denied('recursive_read_secrets'));
    expect(judge('grep -r PASSWORD ..', { cwd: 'src' })).toEqual(denied('recursive_read_secrets'));
    expect(judge('tar cf - ../..', { cwd: 'src' })).toEqual(denied('recursive_read_secrets'));
    expect(judge(`cp -r ${root} copy`)).toEqual(denied('recursive_read_secrets'));
  });

  it('is a warning at high trust, like every destructive rule', () => {
    expect(judge('grep -r PASSWORD ..', { trust: 'high' })).toEqual({
      verdict: 'warn',
      rule_id: 'shell.filesystem.recursive_read_secrets',
    });
  });
});
