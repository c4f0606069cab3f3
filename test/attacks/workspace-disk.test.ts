/**
 * Attack on the disk (issue 25 point 5), through the real daemon: `fallocate -l 5G` in the
 * workspace succeeded, and the workspace shares the disk with the journal and the audit log. With
 * organism.workspace_max_bytes (here 64 MiB; 1 GiB by default) the workspace is an ext4 image of
 * that size mounted on it: fallocate, dd and write_file past it fail with "No space left on device",
 * and the host disk gives it at most the image. The files outlive a restart. As a user without root
 * the daemon cannot mount it, and says so at start.
 */

import { spawnSync } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { mountAt } from '../../src/sandbox/volume/index.ts';
import { type DaemonProcess, REPO_ROOT, startDaemonProcess, useTool } from '../helpers/daemon.ts';
import { RUG } from '../mcp/helpers.ts';

const MIB = 1024 * 1024;
const root = process.getuid?.() === 0;
const toolbox = path.join(REPO_ROOT, 'listeners', 'toolbox.ts');

let dir: string;
let ws: string;
let image: string;
let daemon: DaemonProcess | undefined;

const yaml = (bound: string) => `organism:
  name: disk
${bound}mcp_servers:
  - name: rug
    command: ${process.execPath}
    args: [${JSON.stringify(RUG)}]
    capabilities: { read: read }
listeners:
  - name: toolbox
    description: Calls tools.
    handler: ${toolbox}
    trust: high
    tools: [run_command, write_file]
    tool_config:
      run_command: { shell: true }
`;

async function run(command: string): Promise<string> {
  const { status, result } = await useTool(daemon!.url, 'run_command', { command });
  expect(status).toBe('ok');
  return `${result.stdout}${result.stderr}`;
}

/** Free bytes of the file system the data dir is on, as the host sees it. */
const hostFree = () => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-disk-')));
  ws = path.join(dir, '.organism', 'workspace');
  image = path.join(dir, '.organism', 'volumes', 'workspace.img');
});

afterAll(async () => {
  await daemon?.stop();
  for (const folder of [ws, path.join(dir, '.organism', 'mcp', 'rug')])
    if (mountAt(folder)) spawnSync('umount', ['-l', folder]);
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!root)('organism.workspace_max_bytes in the real daemon (root)', () => {
  it('starts with the workspace on its volume', async () => {
    await writeFile(path.join(dir, 'organism.yaml'), yaml('  workspace_max_bytes: 67108864\n'));
    daemon = await startDaemonProcess(['--config', path.join(dir, 'organism.yaml')]);
    expect(mountAt(await realpath(ws))?.fsType).toBe('ext4');
    expect((await stat(image)).size).toBe(64 * MIB);
    expect(daemon.stdout()).not.toMatch(/has no size bound/);
    const size = Number((await run('df -B1 --output=size . | tail -1')).trim());
    expect(size).toBeGreaterThan(32 * MIB);
    expect(size).toBeLessThanOrEqual(64 * MIB);
  }, 40_000);

  it('fallocate -l 5G fails with no space, and the host disk is not taken', async () => {
    const free = hostFree();
    const out = await run('fallocate -l 5G big; echo "exit $?"; rm -f big');
    expect(out).toContain('No space left on device');
    expect(out).not.toContain('exit 0');
    // The image holds at most its size; the host lost far less than the 5 GiB asked for.
    expect((await stat(image)).blocks * 512).toBeLessThanOrEqual(64 * MIB);
    expect(free - hostFree()).toBeLessThan(1024 * MIB);
  });

  it('a write loop stops with no space too, and write_file then says so', async () => {
    // Whatever happens, the volume is emptied again for the next test.
    onTestFinished(() => run('rm -f fill small-*').then(() => undefined));
    // One big file, then many small ones (each needs a block too).
    const out = await run(
      'dd if=/dev/zero of=fill bs=1M count=200 2>&1 | grep -c "No space left"; ' +
        "python3 -c \"\nimport os\ntry:\n  for i in range(200000):\n    with open(f'small-{i}', 'w') as f: f.write('x')\nexcept OSError as e: print(e.strerror)\"",
    );
    expect(out).toMatch(/^1\n/);
    expect(out).toContain('No space left on device');
    const written = await useTool(daemon!.url, 'write_file', {
      path: 'note.txt',
      content: 'x'.repeat(64 * 1024),
    });
    expect(written.status).not.toBe('ok');
    expect(JSON.stringify(written.result)).toMatch(
      /no space left .*the workspace is full \(its size bound, organism.workspace_max_bytes/,
    );
    expect((await stat(image)).blocks * 512).toBeLessThanOrEqual(64 * MIB);
  }, 60_000);

  it("a stdio MCP server's own workspace has the same bound", async () => {
    const serverWs = path.join(dir, '.organism', 'mcp', 'rug');
    expect(mountAt(await realpath(serverWs))?.fsType).toBe('ext4');
    expect((await stat(path.join(dir, '.organism', 'volumes', 'mcp-rug.img'))).size).toBe(64 * MIB);
    const fill = spawnSync('fallocate', ['-l', '5G', path.join(serverWs, 'big')], { encoding: 'utf8' });
    expect(fill.stderr).toContain('No space left on device');
    await rm(path.join(serverWs, 'big'), { force: true });
  });

  it('keeps the workspace files across a restart; stopped, it lets go of the mount', async () => {
    expect(await run('echo kept > kept.txt && cat kept.txt')).toBe('kept\n');
    await daemon!.stop();
    daemon = undefined;
    expect(mountAt(await realpath(ws))).toBeUndefined();
    expect(mountAt(await realpath(path.join(dir, '.organism', 'mcp', 'rug')))).toBeUndefined();
    daemon = await startDaemonProcess(['--config', path.join(dir, 'organism.yaml')]);
    expect(await run('cat kept.txt')).toBe('kept\n');
    expect(await readFile(path.join(ws, 'kept.txt'), 'utf8')).toBe('kept\n');
  }, 60_000);

  // The daemon mounts the volume while it loads the rest: a start that fails, in the mount or
  // after it, still lets go of the mount and of the data dir.
  it('a start that fails lets go of the volume: a workspace past the bound, or a later failure', async () => {
    const other = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-disk-fail-')));
    const otherWs = path.join(other, '.organism', 'workspace');
    const config = ['--config', path.join(other, 'organism.yaml')];
    try {
      await writeFile(path.join(other, 'organism.yaml'), yaml('  workspace_max_bytes: 16777216\n'));
      await mkdir(otherWs, { recursive: true });
      await writeFile(path.join(otherWs, 'big.bin'), Buffer.alloc(20 * MIB, 1));
      await expect(startDaemonProcess(config)).rejects.toThrow(
        /exited 1 before listening[\s\S]*do not fit in its volume of organism.workspace_max_bytes/,
      );
      expect(mountAt(otherWs)).toBeUndefined();
      expect((await stat(path.join(otherWs, 'big.bin'))).size).toBe(20 * MIB);

      // The volume mounts this time; the start fails after it (the journal cannot be opened).
      await rm(path.join(otherWs, 'big.bin'));
      await writeFile(path.join(other, '.organism', 'journal'), 'not a folder');
      await expect(startDaemonProcess(config)).rejects.toThrow(/exited 1 before listening[\s\S]*journal/);
      expect(mountAt(otherWs)).toBeUndefined();

      // Nothing is left held: the next start takes the data dir and mounts the volume.
      await rm(path.join(other, '.organism', 'journal'));
      const next = await startDaemonProcess(config);
      try {
        expect(mountAt(otherWs)?.fsType).toBe('ext4');
      } finally {
        await next.stop();
      }
      expect(mountAt(otherWs)).toBeUndefined();
    } finally {
      for (const folder of [otherWs, path.join(other, '.organism', 'mcp', 'rug')])
        if (mountAt(folder)) spawnSync('umount', ['-l', folder]);
      await rm(other, { recursive: true, force: true });
    }
  }, 90_000);
});

describe.skipIf(!root)('without root', () => {
  it('the daemon says at start that the workspace has no bound, and run_command still works', async () => {
    const other = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-disk-user-')));
    try {
      await writeFile(path.join(other, 'organism.yaml'), yaml(''));
      await mkdir(path.join(other, '.organism'), { mode: 0o700 });
      for (const p of [other, path.join(other, 'organism.yaml'), path.join(other, '.organism')])
        await chown(p, 65534, 65534);
      // As the user nobody, its home in the project (the audit key goes under it).
      const nobody = await startDaemonProcess(
        ['--config', path.join(other, 'organism.yaml')],
        { HOME: other, XDG_CONFIG_HOME: path.join(other, '.config') },
        ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all'],
      );
      try {
        expect(nobody.stdout()).toMatch(
          /organism.workspace \([^)]*\) has no size bound: mounting its size-bounded volume .* needs root or CAP_SYS_ADMIN on the machine, and the daemon runs as uid 65534/,
        );
        const { status, result } = await useTool(nobody.url, 'run_command', { command: 'id -u; echo ok' });
        expect(status).toBe('ok');
        expect(result.stdout).toContain('ok');
        expect(mountAt(path.join(other, '.organism', 'workspace'))).toBeUndefined();
      } finally {
        await nobody.stop();
      }
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  }, 60_000);
});
