/**
 * Size-bounded workspace volumes (issue 25 point 5), for real: an ext4 image loop-mounted on the
 * folder. Past the bound, fallocate and writes fail with "No space left on device" and the host
 * disk gives the folder no more than the image's size; the content survives an unmount; what the
 * folder held before moves in; two processes share one mount and the last one unmounts it.
 * Mounting needs root (CI and these tests run as root); elsewhere the reason is given.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mountAt, openVolume, type Volume, volumeUnavailable } from '../../src/sandbox/volume/index.ts';

const MIB = 1024 * 1024;
const HOLDER = fileURLToPath(new URL('./support/volume-holder.ts', import.meta.url));
const root = process.getuid?.() === 0;

let tmp: string;
let dir: string;
let image: string;
const opened: Volume[] = [];
const children: ChildProcess[] = [];

async function open(maxBytes = 32 * MIB): Promise<Volume> {
  const volume = await openVolume({ dir, image, maxBytes, setting: 'organism.workspace_max_bytes' });
  opened.push(volume);
  return volume;
}

const sh = (command: string) => spawnSync('/bin/sh', ['-c', command], { cwd: dir, encoding: 'utf8' });

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-volume-')));
  dir = path.join(tmp, 'workspace');
  image = path.join(tmp, 'data', 'volumes', 'workspace.img');
  await mkdir(dir);
});

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const volume of opened.splice(0)) await volume.release();
  // Never leave a mount behind, whatever failed.
  if (mountAt(dir)) spawnSync('umount', ['-l', dir]);
  await rm(tmp, { recursive: true, force: true });
});

afterAll(() => {
  expect(existsSync(tmp)).toBe(false);
});

describe.skipIf(!root)('a size-bounded workspace volume (root)', () => {
  it('fallocate and writes past the bound fail with no space; the image stays within it', async () => {
    const volume = await open(32 * MIB);
    expect(volume.state).toBe('mounted');
    expect(mountAt(dir)?.fsType).toBe('ext4');
    const big = sh('fallocate -l 5G big 2>&1; echo "exit $?"');
    expect(big.stdout).toContain('No space left on device');
    expect(big.stdout).not.toContain('exit 0');
    await rm(path.join(dir, 'big'), { force: true });
    const dd = sh('dd if=/dev/zero of=fill bs=1M count=100 2>&1; echo "exit $?"');
    expect(dd.stdout).toContain('No space left on device');
    // Many small files: the same bound.
    const many = sh(
      'i=0; while [ $i -lt 100 ]; do head -c 1048576 /dev/urandom > f$i || break; i=$((i+1)); done 2>&1; echo "made $i"',
    );
    expect(many.stdout).toContain('No space left on device');
    const info = await stat(image);
    expect(info.size).toBe(32 * MIB);
    // What the host disk gives the workspace: the image's blocks, never more than its size.
    expect(info.blocks * 512).toBeLessThanOrEqual(32 * MIB);
    const df = sh('df -B1 --output=size . | tail -1');
    expect(Number(df.stdout.trim())).toBeLessThanOrEqual(32 * MIB);
  });

  it('keeps the content when unmounted and mounted again; the folder is empty in between', async () => {
    const volume = await open();
    await writeFile(path.join(dir, 'kept.txt'), 'still here');
    await volume.release();
    expect(mountAt(dir)).toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
    const again = await open();
    expect(again.state).toBe('mounted');
    expect(await readFile(path.join(dir, 'kept.txt'), 'utf8')).toBe('still here');
    // No lost+found of the fresh file system in the workspace.
    expect(await readdir(dir)).toEqual(['kept.txt']);
  });

  it('moves in what the folder held before, and keeps its mode', async () => {
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'sub', 'a.txt'), 'a');
    await writeFile(path.join(dir, 'b.txt'), 'b');
    const mode = (await stat(dir)).mode & 0o777;
    const volume = await open();
    expect(volume.note).toContain('moved 2 entries');
    expect(await readFile(path.join(dir, 'sub', 'a.txt'), 'utf8')).toBe('a');
    expect((await stat(dir)).mode & 0o777).toBe(mode);
    await volume.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a folder that holds more than the bound, and leaves it as it was', async () => {
    await writeFile(path.join(dir, 'big.bin'), Buffer.alloc(40 * MIB, 1));
    await expect(open(16 * MIB)).rejects.toMatchObject({
      code: 'sandbox.volume',
      message: expect.stringContaining('do not fit in its volume of organism.workspace_max_bytes'),
    });
    expect(mountAt(dir)).toBeUndefined();
    expect((await stat(path.join(dir, 'big.bin'))).size).toBe(40 * MIB);
    expect(existsSync(image)).toBe(false);
  });

  it('grows and shrinks with the setting while unmounted; a shrink below the content is refused', async () => {
    const first = await open(32 * MIB);
    await writeFile(path.join(dir, 'data.bin'), Buffer.alloc(20 * MIB, 1));
    await first.release();
    const grown = await open(64 * MIB);
    expect(grown.note).toContain('resized');
    expect((await stat(image)).size).toBe(64 * MIB);
    expect(Number(sh('df -B1 --output=size . | tail -1').stdout.trim())).toBeGreaterThan(48 * MIB);
    await grown.release();
    await expect(open(16 * MIB)).rejects.toMatchObject({ code: 'sandbox.volume' });
    expect(mountAt(dir)).toBeUndefined();
    // resize2fs's own minimum for this content and file system is a little above 46 MiB.
    const shrunk = await open(48 * MIB);
    expect((await stat(image)).size).toBe(48 * MIB);
    expect((await stat(path.join(dir, 'data.bin'))).size).toBe(20 * MIB);
    await shrunk.release();
  });

  it('is shared with another process: the last one to let go unmounts it', async () => {
    const mine = await open();
    const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, dir, image, String(32 * MIB)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
    });
    await expect.poll(() => out, { timeout: 20_000 }).toContain('reused');
    await mine.release();
    // The other process still uses it: still mounted.
    expect(mountAt(dir)?.fsType).toBe('ext4');
    child.stdin!.write('go\n');
    await expect.poll(() => out, { timeout: 20_000 }).toContain('released');
    expect(mountAt(dir)).toBeUndefined();
  }, 40_000);

  it('uses a mount a killed process left, and another file system mounted there as it is', async () => {
    const left = await open();
    // As if the process died: it never released (its fd is gone with it; here, closed by hand).
    spawnSync('true');
    opened.splice(opened.indexOf(left), 1);
    const again = await openVolume({ dir, image, maxBytes: 32 * MIB, setting: 's' });
    opened.push(again);
    expect(again.state).toBe('reused');
    await again.release();
    await left.release();
    expect(mountAt(dir)).toBeUndefined();
    spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
    try {
      const foreign = await openVolume({ dir, image, maxBytes: 32 * MIB, setting: 's' });
      expect(foreign.state).toBe('foreign');
      expect(foreign.note).toContain('tmpfs');
      await foreign.release();
      expect(mountAt(dir)?.fsType).toBe('tmpfs');
    } finally {
      spawnSync('umount', [dir]);
    }
  });
});

describe('where a volume cannot be mounted', () => {
  it('says why and what to do, without root', () => {
    const why = volumeUnavailable({ uid: 1000, capEff: 0n, initialUserNs: true });
    expect(why).toMatch(/needs root or CAP_SYS_ADMIN on the machine, and the daemon runs as uid 1000/);
    expect(volumeUnavailable({ uid: 0, capEff: 0x1ffffffffffn, initialUserNs: false })).toMatch(
      /user namespace/,
    );
  });

  it('a bound under 16 MiB is refused', async () => {
    if (!root) return;
    await expect(open(1024)).rejects.toMatchObject({ code: 'sandbox.volume' });
  });
});
