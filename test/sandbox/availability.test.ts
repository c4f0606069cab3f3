/**
 * run_command never runs a program unsandboxed because bubblewrap is missing or cannot create its
 * namespaces: it is unavailable, with the reason and how to fix it, unless the listener says
 * `sandbox: none` itself.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CONFIG_DEFAULTS } from '../../src/sandbox/index.ts';
import runCommand from '../../tools/run-command.ts';
import { allowAll, makeContext, toolDispatcher } from '../tools/tool-helpers.ts';

let dir: string;
const saved = process.env.ORGANISM_BWRAP;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'organism-sandbox-avail-'));
  // A bwrap that behaves like one on a kernel refusing user namespaces.
  await writeFile(
    path.join(dir, 'bwrap'),
    '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
  );
  await chmod(path.join(dir, 'bwrap'), 0o755);
  // And one too old for the options the sandbox uses.
  await writeFile(
    path.join(dir, 'old-bwrap'),
    '#!/bin/sh\necho "bwrap: Unknown option --size" >&2\nexit 1\n',
  );
  await chmod(path.join(dir, 'old-bwrap'), 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  if (saved === undefined) delete process.env.ORGANISM_BWRAP;
  else process.env.ORGANISM_BWRAP = saved;
});

function dispatcher() {
  return toolDispatcher({
    tools: [runCommand],
    listener: { name: 'ops', tools: ['run_command'], tool_config: { run_command: { shell: true } } },
    workspace: dir,
    guard: allowAll,
  });
}
const call = (d: ReturnType<typeof dispatcher>, listener = 'ops') =>
  d.call({ tool: 'run_command', args: { command: 'echo ran' }, listener, thread: 't' });

describe('run_command without a working bubblewrap', () => {
  it('defaults to bubblewrap', () => {
    expect(SANDBOX_CONFIG_DEFAULTS.sandbox).toBe('bubblewrap');
  });

  it('is available with the real bwrap', async () => {
    expect(await call(dispatcher())).toMatchObject({ status: 'ok', value: { stdout: 'ran\n' } });
  });

  it('is unavailable when bwrap is not installed, saying how to install it', async () => {
    process.env.ORGANISM_BWRAP = path.join(dir, 'no-such-bwrap');
    const d = dispatcher();
    const result = await call(d);
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    const message = (result as { error: { message: string } }).error.message;
    expect(message).toContain('bubblewrap is not installed');
    expect(message).toContain('apt-get install bubblewrap');
    expect(d.availability('ops')[0]).toMatchObject({
      available: false,
      reason: expect.stringContaining('apt-get install bubblewrap'),
    });
    // Called directly, the tool refuses too: nothing runs unsandboxed.
    await expect(
      runCommand.run({ command: 'echo ran' }, makeContext({ workspace: dir, config: {} })),
    ).rejects.toMatchObject({ code: 'sandbox.unavailable' });
  });

  it('is unavailable when bwrap is not on PATH', async () => {
    process.env.ORGANISM_BWRAP = 'bwrap-not-installed-xyz';
    const result = await call(dispatcher());
    expect((result as { error: { message: string } }).error.message).toMatch(
      /no bwrap-not-installed-xyz on PATH.*apt-get install bubblewrap/,
    );
  });

  it('is unavailable when bwrap cannot create its namespaces, saying why', async () => {
    process.env.ORGANISM_BWRAP = path.join(dir, 'bwrap');
    const result = await call(dispatcher());
    expect(result).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    const message = (result as { error: { message: string } }).error.message;
    expect(message).toContain('cannot create its namespaces');
    expect(message).toContain('No permissions to create new namespace');
    expect(message).toContain('user namespaces');
  });

  it('is unavailable when bwrap is too old, saying which version is needed', async () => {
    process.env.ORGANISM_BWRAP = path.join(dir, 'old-bwrap');
    const result = await call(dispatcher());
    expect((result as { error: { message: string } }).error.message).toMatch(
      /bubblewrap is too old \(bwrap: Unknown option --size\): 0\.7 or newer/,
    );
  });

  it('still runs for a listener that chose sandbox: none', async () => {
    process.env.ORGANISM_BWRAP = path.join(dir, 'no-such-bwrap');
    const d = toolDispatcher({
      tools: [runCommand],
      listener: { name: 'loose', tools: ['run_command'], tool_config: { run_command: { sandbox: 'none' } } },
      workspace: dir,
      guard: allowAll,
    });
    expect(await call(d, 'loose')).toMatchObject({ status: 'ok', value: { stdout: 'ran\n' } });
  });
});

describe('a read-only /proc/sys (a container)', () => {
  // A setpriv that fails the way the write of `file` does where /proc/sys is mounted read-only (or
  // where ns_last_pid is not ours to set).
  for (const file of ['pid_max', 'ns_last_pid']) {
    it(`costs the pid_max bound, not run_command (${file} refused)`, async () => {
      const { BubblewrapSandbox } = await import('../../src/sandbox/bubblewrap.ts');
      const bin = path.join(dir, `ro-proc-sys-${file}`);
      await mkdir(bin);
      await writeFile(
        path.join(bin, 'setpriv'),
        `#!/bin/sh\necho "sh: 1: cannot create /proc/sys/kernel/${file}: Read-only file system" >&2\nexit 2\n`,
      );
      await chmod(path.join(bin, 'setpriv'), 0o755);
      const sandbox = new BubblewrapSandbox({
        uid: 0,
        kernelRelease: '6.14.0',
        path: `${bin}:/usr/bin:/bin`,
      });
      expect(sandbox.pidMaxBound).toBe(true);
      expect(sandbox.unavailable()).toBeNull();
      expect(sandbox.pidMaxBound).toBe(false);
    });
  }
});
