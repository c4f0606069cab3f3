/**
 * The lock the OS releases (src/storage/dir-lock.ts): a Unix socket its holder listens on. Held
 * while its process lives, whatever pid a file says; stale once that process is gone, however it
 * went; taken over by one starter only when several find it stale at once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDirLock, type DirLock, probeDirLock } from '../../src/storage/dir-lock.ts';

const HOLDER = fileURLToPath(new URL('./support/lock-holder.ts', import.meta.url));

const locks: DirLock[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const lock of locks.splice(0)) await lock.release();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

const tempDir = () => mkdtemp(join(tmpdir(), 'organism-dir-lock-'));

async function take(dir: string, name = 'test.sock'): Promise<DirLock> {
  const lock = await acquireDirLock({ dir, name });
  locks.push(lock);
  return lock;
}

/**
 * Starts lock-holder.ts: the child, `ready` (try: once it waits for its go on stdin) and `line`,
 * the first line it printed after that.
 */
function holder(
  dir: string,
  name: string,
  mode: 'hold' | 'try',
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; ready: Promise<void>; line: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, dir, name, mode], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  children.push(child);
  let out = '';
  const lines = () => out.split('\n').slice(0, -1);
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
    if (mode === 'hold') resolve();
  });
  const line = new Promise<string>((resolve) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (lines().includes('ready')) onReady();
      const found = lines().find((l) => l !== 'ready');
      if (found !== undefined) resolve(found);
    });
    child.once('exit', () => resolve(lines().find((l) => l !== 'ready') ?? `exited: ${out}`));
  });
  return { child, ready, line };
}

/** A socket file whose process was killed -9: the file stays, nobody listens. */
async function deadSocket(path: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

describe('acquireDirLock', () => {
  it('is held while its holder lives and answers who holds it; released, the socket is gone', async () => {
    const dir = await tempDir();
    const lock = await take(dir);
    lock.announce({ url: 'http://127.0.0.1:7777' });
    expect((await stat(join(dir, 'test.sock'))).isSocket()).toBe(true);
    expect((await stat(join(dir, 'test.sock'))).mode & 0o777).toBe(0o600);
    expect(await probeDirLock(dir, 'test.sock')).toEqual({
      state: 'held',
      holder: { pid: process.pid, url: 'http://127.0.0.1:7777' },
    });
    await expect(acquireDirLock({ dir, name: 'test.sock' })).rejects.toMatchObject({
      code: 'lock.held',
      message: expect.stringContaining('held by this process'),
    });
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
    expect(await probeDirLock(dir, 'test.sock')).toEqual({ state: 'free' });
    await take(dir);
  });

  it('refuses while another live process holds it, naming its pid; takes it once that process is killed -9', async () => {
    const dir = await tempDir();
    const { child, line } = holder(dir, 'test.sock', 'hold');
    expect(await line).toBe(`held ${child.pid}`);
    await expect(acquireDirLock({ dir, name: 'test.sock' })).rejects.toMatchObject({
      code: 'lock.held',
      message: `${join(dir, 'test.sock')} is held by process ${child.pid}`,
      details: { holder: { pid: child.pid, url: 'http://127.0.0.1:1' } },
    });
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
    // The socket file is still there; nobody listens on it.
    expect(await readdir(dir)).toEqual(['test.sock']);
    expect(await probeDirLock(dir, 'test.sock')).toEqual({ state: 'stale' });
    await take(dir);
    expect(await probeDirLock(dir, 'test.sock')).toMatchObject({
      state: 'held',
      holder: { pid: process.pid },
    });
  });

  it('a file holding a pid that is alive (1, as a container daemon had) is stale, not held', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'LOCK'), '1');
    expect(await probeDirLock(dir, 'LOCK')).toEqual({ state: 'stale' });
    await take(dir, 'LOCK');
    expect((await stat(join(dir, 'LOCK'))).isSocket()).toBe(true);
    await writeFile(join(dir, 'LOCK2'), String(process.ppid));
    await take(dir, 'LOCK2');
  });

  it('a symbolic link at the lock path is removed, never what it points to', async () => {
    const dir = await tempDir();
    const elsewhere = await tempDir();
    await writeFile(join(elsewhere, 'precious'), 'keep me');
    await symlink(join(elsewhere, 'precious'), join(dir, 'to-file.sock'));
    await symlink(join(elsewhere, 'nothing-here'), join(dir, 'dangling.sock'));
    await take(dir, 'to-file.sock');
    await take(dir, 'dangling.sock');
    for (const name of ['to-file.sock', 'dangling.sock'])
      expect((await lstat(join(dir, name))).isSocket(), name).toBe(true);
    expect(await readdir(elsewhere)).toEqual(['precious']);
    expect(await readFile(join(elsewhere, 'precious'), 'utf8')).toBe('keep me');
  });

  it('a process squatting the takeover mutex delays a takeover by takeoverWaitMs, no more', async () => {
    const dir = await realpath(await tempDir());
    await writeFile(join(dir, 'test.sock'), '1');
    const digest = createHash('sha256').update(join(dir, 'test.sock')).digest('hex').slice(0, 32);
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(`\0organism-lock-takeover-${digest}`, resolve));
    try {
      const began = Date.now();
      const lock = await acquireDirLock({ dir, name: 'test.sock', takeoverWaitMs: 1500 });
      locks.push(lock);
      const waited = Date.now() - began;
      expect(waited).toBeGreaterThanOrEqual(1400);
      expect(waited).toBeLessThan(10_000);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('a socket left by a process killed -9 is stale', async () => {
    const dir = await tempDir();
    await deadSocket(join(dir, 'test.sock'));
    await take(dir);
  });

  it('works in a folder whose path is longer than a Unix socket path can be', async () => {
    const dir = join(await tempDir(), 'd'.repeat(100), 'e'.repeat(100));
    await mkdir(dir, { recursive: true });
    const lock = await take(dir);
    lock.announce({ url: 'x' });
    expect((await stat(join(dir, 'test.sock'))).isSocket()).toBe(true);
    expect(await probeDirLock(dir, 'test.sock')).toMatchObject({ state: 'held', holder: { url: 'x' } });
    const { line } = holder(dir, 'test.sock', 'hold');
    expect(await line).toMatch(new RegExp(`^refused ${process.pid} `));
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('says clearly what is wrong when the lock path cannot be a socket', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'test.sock'));
    await expect(acquireDirLock({ dir, name: 'test.sock' })).rejects.toMatchObject({
      code: 'lock.io',
      message: expect.stringMatching(/cannot remove the stale lock .*test\.sock \(E\w+\): remove it by hand/),
    });
    await expect(acquireDirLock({ dir: join(dir, 'missing'), name: 'x' })).rejects.toMatchObject({
      code: 'lock.io',
      message: expect.stringContaining('ENOENT'),
    });
  });

  it('a release never removes a socket that is not its own', async () => {
    const dir = await tempDir();
    const lock = await take(dir);
    // Someone removed the socket by hand and another process made its own there.
    await rm(join(dir, 'test.sock'));
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(join(dir, 'test.sock'), resolve));
    await lock.release();
    expect((await stat(join(dir, 'test.sock'))).isSocket()).toBe(true);
    await new Promise((resolve) => other.close(resolve));
  });

  it('of five processes finding one stale lock at once, exactly one takes it; the others name it', async () => {
    for (let round = 0; round < 2; round++) {
      const dir = await tempDir();
      await deadSocket(join(dir, 'test.sock'));
      // Each pauses 200 ms between finding it stale and taking it over: without the takeover
      // mutex all five would find it stale, and each remove the socket of the one before.
      const starters = Array.from({ length: 5 }, () =>
        holder(dir, 'test.sock', 'try', { LOCK_HOLDER_PAUSE_MS: '200' }),
      );
      // Each has loaded and waits on its stdin: go.
      await Promise.all(starters.map((s) => s.ready));
      for (const { child } of starters) child.stdin!.write('go\n');
      const lines = await Promise.all(starters.map((s) => s.line));
      const winners = lines.filter((line) => line.startsWith('held '));
      expect(winners, lines.join('\n')).toHaveLength(1);
      const winner = winners[0]!.split(' ')[1];
      for (const line of lines.filter((l) => !l.startsWith('held ')))
        expect(line, lines.join('\n')).toMatch(new RegExp(`^refused ${winner} `));
    }
  }, 60_000);
});
