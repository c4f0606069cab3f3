import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolConfig } from '../../src/tools/types.ts';
import { parseArgv, splitCommandList } from '../../tools/lib/proc-argv.ts';
import runCommand from '../../tools/run-command.ts';
import { allowAll, makeContext, toolDispatcher } from './tool-helpers.ts';

let ws: string;

const makeCtx = (config: ToolConfig = {}, signal?: AbortSignal) =>
  makeContext({ config, workspace: ws, ...(signal ? { signal } : {}) });

const run = (command: string, config: ToolConfig = {}, extra: { cwd?: string; timeout_ms?: number } = {}) =>
  runCommand.run({ command, ...extra }, makeCtx(config));

/** A process is gone when kill(pid, 0) fails or it is only a zombie waiting to be reaped. */
async function isGone(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat === '' || /^\d+ \(.*\) Z/.test(stat);
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (await isGone(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

beforeAll(async () => {
  ws = await mkdtemp(path.join(os.tmpdir(), 'organism-run-command-'));
  await mkdir(path.join(ws, 'sub'));
  await writeFile(path.join(ws, 'a-file.txt'), 'x');
  await symlink('/etc', path.join(ws, 'etc-link'));
});

afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

describe('argv tokenizer', () => {
  it('splits on blanks and honours quotes and escapes', () => {
    expect(parseArgv(`printf '%s|' a 'b c' "d\\"e" f\\ g`)).toEqual([
      'printf',
      '%s|',
      'a',
      'b c',
      'd"e',
      'f g',
    ]);
  });
  it('keeps operators inside quotes literal', () => {
    expect(parseArgv(`echo 'a | b' "c && d; e > f"`)).toEqual(['echo', 'a | b', 'c && d; e > f']);
  });
  it('refuses operators and substitution outside quotes, naming the column', () => {
    for (const [cmd, col] of [
      ['ls | wc', 4],
      ['true && false', 6],
      ['echo a; echo b', 7],
      ['echo x > out.txt', 8],
      ['echo $(id)', 6],
      ['echo `id`', 6],
    ] as const) {
      expect(() => parseArgv(cmd)).toThrow(expect.objectContaining({ code: 'command.needs_shell' }));
      expect(() => parseArgv(cmd)).toThrow(`column ${col}`);
    }
  });
  it('splits a shell list into simple commands and drops 2>&1', () => {
    expect(splitCommandList('git status && git diff 2>&1 | head -n 5; ls')).toEqual([
      ['git', 'status'],
      ['git', 'diff'],
      ['head', '-n', '5'],
      ['ls'],
    ]);
  });
});

describe('run_command: success', () => {
  it('runs a program without a shell and returns its output', async () => {
    const r = await run(`printf '%s|' a 'b c' "$HOME"`);
    // $HOME is literal without a shell.
    expect(r).toEqual({
      exit_code: 0,
      signal: null,
      stdout: 'a|b c|$HOME|',
      stderr: '',
      timed_out: false,
      truncated: false,
    });
  });
  it('reports a non-zero exit and stderr as a normal result', async () => {
    const r = await run(`sh -c 'echo oops >&2; exit 3'`);
    expect(r.exit_code).toBe(3);
    expect(r.stderr).toBe('oops\n');
    expect(r.timed_out).toBe(false);
  });
  it('runs in the workspace, or in cwd inside it', async () => {
    expect((await run('pwd')).stdout.trim()).toBe(await realpath(ws));
    expect((await run('pwd', {}, { cwd: 'sub' })).stdout.trim()).toBe(await realpath(path.join(ws, 'sub')));
  });
  it('uses /bin/sh -c when tool_config says shell: true', async () => {
    const r = await run('echo abc | tr a-c x-z && echo done', { shell: true });
    expect(r.stdout).toBe('xyz\ndone\n');
  });
});

describe('run_command: bad arguments', () => {
  it('refuses shell syntax without shell: true and runs nothing', async () => {
    const err = await run('echo hi > made.txt').catch((e) => e);
    expect(err.code).toBe('command.needs_shell');
    expect(err.message).toContain('shell: true');
    await expect(readFile(path.join(ws, 'made.txt'))).rejects.toThrow();
  });
  it('refuses an unterminated quote', async () => {
    await expect(run(`echo 'abc`)).rejects.toMatchObject({ code: 'command.syntax' });
  });
  it('refuses an empty command and a bad timeout', async () => {
    await expect(run('   ')).rejects.toMatchObject({ code: 'command.bad_argument' });
    await expect(run('true', {}, { timeout_ms: 0 })).rejects.toMatchObject({ code: 'command.bad_argument' });
    await expect(run('true', {}, { timeout_ms: 1.5 })).rejects.toMatchObject({
      code: 'command.bad_argument',
    });
  });
  it('refuses a cwd outside the workspace, through a symlink, missing, or a file', async () => {
    for (const cwd of ['..', '/tmp', 'etc-link', 'no-such-dir', 'a-file.txt']) {
      await expect(run('pwd', {}, { cwd })).rejects.toMatchObject({ code: 'command.bad_cwd' });
    }
  });
  it('refuses bad tool_config values by key', async () => {
    await expect(run('true', { shell: 'yes' })).rejects.toThrow('tool_config.shell');
    await expect(run('true', { max_output_bytes: -1 })).rejects.toThrow('tool_config.max_output_bytes');
    await expect(run('true', { allowed_commands: [''] })).rejects.toThrow('allowed_commands[0]');
  });
});

describe('run_command: allowed_commands', () => {
  const config = { allowed_commands: ['echo', 'printf %s', ['sh', '-c', 'exit 0']] };
  it('runs commands that start with an allowed program or prefix', async () => {
    expect((await run('echo hi', config)).stdout).toBe('hi\n');
    expect((await run('printf %s ok', config)).stdout).toBe('ok');
    expect((await run(`sh -c 'exit 0'`, config)).exit_code).toBe(0);
  });
  it('refuses anything else with a clear error', async () => {
    for (const cmd of ['ls', 'printf x', '/bin/echo hi', './echo', `sh -c 'exit 1'`]) {
      const err = await run(cmd, config).catch((e) => e);
      expect(err.code).toBe('command.not_allowed');
      expect(err.message).toContain('"echo"');
    }
  });
  it('with a shell, checks every command of a list and refuses substitution and redirection', async () => {
    const shellConfig = { ...config, shell: true };
    expect((await run('echo a && echo b 2>&1 | printf %s x', shellConfig)).stdout).toBe('a\nx');
    for (const cmd of ['echo a; ls', 'echo $(ls)', 'echo "`ls`"', 'echo a > f.txt', '(ls)', 'echo a | cat']) {
      await expect(run(cmd, shellConfig)).rejects.toMatchObject({ code: 'command.not_allowed' });
    }
  });
});

describe('run_command: blocked_commands', () => {
  it('refuses a blocked program by name or by path', async () => {
    for (const cmd of ['rm -f x', '/bin/rm -f x']) {
      await expect(run(cmd, { blocked_commands: ['rm'] })).rejects.toMatchObject({
        code: 'command.not_allowed',
      });
    }
    expect((await run('echo fine', { blocked_commands: ['rm'] })).stdout).toBe('fine\n');
  });
});

describe('run_command: environment', () => {
  it('passes no API key to the child, only the allowlist', async () => {
    process.env.FAKE_API_KEY = 'secret-value-123';
    process.env.ORGANISM_TEST_VISIBLE = 'visible';
    try {
      const r = await run('env', { env_allowlist: ['ORGANISM_TEST_VISIBLE'] });
      expect(r.exit_code).toBe(0);
      expect(r.stdout).not.toContain('FAKE_API_KEY');
      expect(r.stdout).not.toContain('secret-value-123');
      expect(r.stdout).toContain('ORGANISM_TEST_VISIBLE=visible');
      expect(r.stdout).toMatch(/^PATH=/m);
      const names = r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('=')[0]);
      for (const n of names)
        expect(['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TERM', 'ORGANISM_TEST_VISIBLE', 'PWD']).toContain(n);
    } finally {
      delete process.env.FAKE_API_KEY;
      delete process.env.ORGANISM_TEST_VISIBLE;
    }
  });
  it('refuses a credential-looking name in env_allowlist', async () => {
    await expect(run('env', { env_allowlist: ['OPENAI_API_KEY'] })).rejects.toMatchObject({
      code: 'command.bad_config',
    });
    await expect(run('env', { env_allowlist: ['GITHUB_TOKEN'] })).rejects.toMatchObject({
      code: 'command.bad_config',
    });
  });
});

describe('run_command: the outside world failing', () => {
  it('says command not found, with the exit code a shell would give', async () => {
    const err = await run('no-such-program-xyz --flag').catch((e) => e);
    expect(err.code).toBe('command.not_found');
    expect(err.message).toContain('no-such-program-xyz');
    expect(err.message).toContain('127');
  });
  it('kills a program that runs past its timeout', async () => {
    const r = await run('sleep 30', {}, { timeout_ms: 300 });
    expect(r.timed_out).toBe(true);
    expect(r.exit_code).toBeNull();
    expect(r.signal).toBe('SIGKILL');
  });
  it('caps the timeout at tool_config.timeout_ms', async () => {
    const r = await run('sleep 30', { timeout_ms: 300 }, { timeout_ms: 60_000 });
    expect(r.timed_out).toBe(true);
  });
  it('on timeout kills the whole process group, grandchildren included', async () => {
    // sandbox: none: the pid is looked for on the host, so the program must see the host's pids
    // (the sandboxed equivalent is in test/sandbox/run-command-sandbox.test.ts).
    const r = await run(
      `sleep 30 & echo $! > grandchild.pid; sleep 30`,
      { shell: true, sandbox: 'none' },
      { timeout_ms: 500 },
    );
    expect(r.timed_out).toBe(true);
    const pid = Number((await readFile(path.join(ws, 'grandchild.pid'), 'utf8')).trim());
    expect(pid).toBeGreaterThan(0);
    expect(await waitGone(pid)).toBe(true);
  });
  it('leaves no background process behind when the command exits', async () => {
    // sandbox: none, as above: the pid printed must be a host pid.
    const r = await run('sleep 30 & echo $!', { shell: true, sandbox: 'none' });
    expect(r.exit_code).toBe(0);
    const pid = Number(r.stdout.trim());
    expect(await waitGone(pid)).toBe(true);
  });
  it('cuts huge output at max_output_bytes and says so', async () => {
    const r = await run(`sh -c 'seq 1 100000; seq 1 1000 >&2'`, { max_output_bytes: 1000 });
    expect(r.exit_code).toBe(0);
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.stdout)).toBe(1000);
    expect(r.stdout.startsWith('1\n2\n3\n')).toBe(true);
    expect(r.stdout_bytes).toBe((await run('seq 1 100000', { max_output_bytes: 10_000_000 })).stdout.length);
    expect(Buffer.byteLength(r.stderr)).toBe(1000);
  });
  it('stops and kills the group when the call is cancelled', async () => {
    const controller = new AbortController();
    const pending = runCommand.run({ command: 'sleep 30' }, makeCtx({}, controller.signal));
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toMatchObject({ code: 'command.aborted' });
  });
});

describe('run_command through the Dispatcher', () => {
  function dispatcher(toolConfig: ToolConfig) {
    return toolDispatcher({
      tools: [runCommand],
      listener: {
        name: 'ops',
        tools: ['run_command'],
        tool_config: { run_command: toolConfig },
        trust: 'medium',
      },
      workspace: ws,
      guard: allowAll,
    });
  }
  it('runs a command, and reports timed_out with output before the runtime gives up', async () => {
    // 3 s, not 1: a sandboxed echo beside other test files on two busy cores took over a second.
    const d = dispatcher({ timeout_ms: 3000, allowed_commands: ['echo', 'sh'] });
    const ok = await d.call({
      tool: 'run_command',
      args: { command: 'echo via dispatcher' },
      listener: 'ops',
      thread: 't',
    });
    expect(ok).toMatchObject({ status: 'ok', value: { exit_code: 0, stdout: 'via dispatcher\n' } });
    const slow = await d.call({
      tool: 'run_command',
      args: { command: `sh -c 'echo started; sleep 30'` },
      listener: 'ops',
      thread: 't',
    });
    expect(slow).toMatchObject({ status: 'ok', value: { timed_out: true, stdout: 'started\n' } });
    const refused = await d.call({
      tool: 'run_command',
      args: { command: 'ls' },
      listener: 'ops',
      thread: 't',
    });
    expect(refused).toMatchObject({ status: 'refused', error: { code: 'command.not_allowed' } });
  });
  it('rejects an unknown tool_config key when the organism starts', () => {
    expect(() => dispatcher({ shel: true })).toThrow(/tool_config\.run_command\.shel/);
  });
});
