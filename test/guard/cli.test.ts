/**
 * `organism guard check` through the real CLI entry point: JSON lines in, one verdict line out per
 * case. The shell, web and email corpora are replayed through it, so the CLI gives exactly what
 * the guards give.
 */

import { mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { loadCorpus } from './corpus-cases.ts';

const corpus = (name: 'email' | 'shell' | 'web') => loadCorpus<Record<string, any>>(name);

async function check(lines: unknown[]): Promise<{ code: number; out: any[]; stderr: string[] }> {
  const io = captureIo(lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n'));
  const code = await main(['guard', 'check'], io);
  return { code, out: io.stdout.map((s) => JSON.parse(s)), stderr: io.stderr };
}

let ws: string;
beforeAll(async () => {
  ws = await realpath(await mkdtemp(path.join(tmpdir(), 'organism-guard-cli-')));
  await symlink('/etc', path.join(ws, 'etc-link'));
});
afterAll(() => rm(ws, { recursive: true, force: true }));

describe('organism guard check', () => {
  it('prints one verdict line per case, with exactly the four fields', async () => {
    const { code, out } = await check([
      { tool: 'run_command', args: { command: 'rm -rf /' }, trust: 'medium', tool_config: {}, workspace: ws },
      { tool: 'run_command', args: { command: 'ls' }, trust: 'low', tool_config: {}, workspace: ws },
    ]);
    expect(code).toBe(0);
    expect(out).toHaveLength(2);
    expect(Object.keys(out[0])).toEqual(['verdict', 'rule_id', 'reason', 'suggestion']);
    expect(out[0]).toMatchObject({ verdict: 'deny', rule_id: 'shell.filesystem.rm_root' });
    expect(out[1]).toEqual({ verdict: 'allow', rule_id: null, reason: null, suggestion: null });
  });

  it('replays the shell corpus', async () => {
    const cases = corpus('shell');
    const { code, out } = await check(
      cases.map((c) => ({
        tool: 'run_command',
        args: { command: c.command },
        trust: c.trust,
        workspace: ws,
      })),
    );
    expect(code).toBe(0);
    expect(out.map((o) => [o.verdict, o.rule_id])).toEqual(cases.map((c) => [c.verdict, c.rule_id]));
  });

  it('replays the web corpus for fetch_url and webhook, without DNS', async () => {
    const cases = corpus('web');
    for (const tool of ['fetch_url', 'webhook']) {
      const { code, out } = await check(
        cases.map((c) => ({ tool, args: { url: c.url }, tool_config: c.tool_config, workspace: ws })),
      );
      expect(code).toBe(0);
      expect(out.map((o) => [o.verdict, o.rule_id])).toEqual(cases.map((c) => [c.verdict, c.rule_id]));
    }
  });

  it('replays the email corpus', async () => {
    const cases = corpus('email');
    const { code, out } = await check(
      cases.map((c) => ({ tool: 'send_email', args: c.args, tool_config: c.tool_config, workspace: ws })),
    );
    expect(code).toBe(0);
    expect(out.map((o) => [o.verdict, o.rule_id])).toEqual(cases.map((c) => [c.verdict, c.rule_id]));
  });

  it('judges file tools against the given workspace, symlinks resolved', async () => {
    const { out } = await check([
      { tool: 'read_file', args: { path: 'notes.md' }, workspace: ws },
      { tool: 'read_file', args: { path: 'etc-link/hostname' }, workspace: ws },
      { tool: 'write_file', args: { path: '/etc/passwd' }, workspace: ws },
      { tool: 'list_dir', args: { path: '.git' }, trust: 'high', workspace: ws },
      {
        tool: 'read_file',
        args: { path: '/data/x.csv' },
        tool_config: { allowed_paths: ['/data/**'] },
        workspace: ws,
      },
    ]);
    expect(out.map((o) => [o.verdict, o.rule_id])).toEqual([
      ['allow', null],
      ['deny', 'file.symlink_escape'],
      ['deny', 'file.system_write'],
      ['warn', 'file.git_internals'],
      ['allow', null],
    ]);
  });

  it('defaults trust to medium and accepts "guard" for tools it does not know', async () => {
    const { code, out } = await check([
      { tool: 'run_command', args: { command: 'git push --force' } },
      { tool: 'my_shell', guard: 'shell', args: { command: 'git push --force' }, trust: 'high' },
    ]);
    expect(code).toBe(0);
    expect(out.map((o) => o.verdict)).toEqual(['deny', 'warn']);
  });

  it('reports a malformed line with its number, carries on, and exits 1', async () => {
    const { code, out } = await check([
      '{"tool": "run_command", "args": {"command": "ls"}}',
      '{not json',
      '{"tool": "run_command", "args": {"command": "ls"}, "trust": "paranoid"}',
      '{"tool": "teleport", "args": {}}',
      '{"tool": "run_command", "args": "ls"}',
      '{"tool": "read_file", "args": {"path": "a"}, "workspace": "relative/dir"}',
      '{"tool": "run_command", "args": {"command": "ls"}, "extra": 1}',
      '[1, 2]',
      '{"tool": "run_command", "args": {"command": "rm -rf ~"}}',
    ]);
    expect(code).toBe(1);
    expect(out).toHaveLength(9);
    expect(out[0]).toMatchObject({ verdict: 'allow' });
    expect(out[1].error).toMatch(/^line 2: not valid JSON/);
    expect(out[2].error).toMatch(/^line 3: "trust" must be one of low, medium, high/);
    expect(out[3].error).toMatch(/^line 4: no guard is known for tool "teleport"/);
    expect(out[4].error).toMatch(/^line 5: "args" must be an object/);
    expect(out[5].error).toMatch(/^line 6: "workspace" must be an absolute path/);
    expect(out[6].error).toMatch(/^line 7: unknown key "extra"/);
    expect(out[7].error).toMatch(/^line 8: a case must be a JSON object/);
    expect(out[8]).toMatchObject({ verdict: 'deny', rule_id: 'shell.filesystem.rm_home' });
  });

  it('prints usage and refuses unknown subcommands', async () => {
    const help = captureIo('');
    expect(await main(['guard', '--help'], help)).toBe(0);
    expect(help.stdout.join('\n')).toContain('organism guard check');
    const bad = captureIo('');
    expect(await main(['guard', 'inspect'], bad)).toBe(1);
    expect(bad.stderr.join('\n')).toContain("unknown subcommand 'inspect'");
  });

  it('exits 0 on empty input', async () => {
    const { code, out } = await check([]);
    expect(code).toBe(0);
    expect(out).toEqual([]);
  });
});
