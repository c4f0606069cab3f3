/**
 * What of the host a sandboxed program sees and where it can write, in the real bubblewrap (issue
 * 25 point 5): host details that need no sharing (network addresses in /sys, the kernel keyrings
 * of /proc/keys) are not shown; the workspace, the private /tmp and a bounded /dev/shm are the only
 * places it writes more than a page (not /dev, not the covers over hidden folders: RAM with no bound);
 * ordinary programs that read /proc and /sys (node, python, git, nproc) still work.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolConfig } from '../../src/config/types.ts';
import type { ToolRunContext } from '../../src/tools/types.ts';
import runCommand from '../../tools/run-command.ts';
import { makeContext } from '../tools/tool-helpers.ts';

let root: string;
let dataDir: string;
let ws: string;

function ctx(config: ToolConfig = {}): ToolRunContext {
  const base = makeContext({
    config,
    workspace: ws,
    sections: {
      file: path.join(root, 'organism.yaml'),
      organism: { name: 't', data_dir: dataDir, workspace: ws },
    },
  });
  return { ...base, dataDir };
}

const run = (command: string, config: ToolConfig = {}) =>
  runCommand.run({ command }, ctx({ shell: true, ...config }));

/** The host's own network addresses as /sys shows them (MACs other than all zeros). */
function hostMacs(): string[] {
  const macs: string[] = [];
  for (const name of readdirSync('/sys/class/net')) {
    try {
      const mac = readFileSync(`/sys/class/net/${name}/address`, 'utf8').trim();
      if (mac && mac !== '00:00:00:00:00:00') macs.push(mac);
    } catch {
      // not every entry has an address
    }
  }
  return macs;
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-host-view-')));
  dataDir = path.join(root, '.organism');
  ws = path.join(dataDir, 'workspace');
  await mkdir(ws, { recursive: true });
  await writeFile(path.join(root, 'organism.yaml'), 'organism:\n  name: t\n');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('host details that need no sharing are not shown', () => {
  it('no network interface or address of the host in /sys, with or without network', async () => {
    const macs = hostMacs();
    // The host has some (else this test would prove nothing).
    expect(macs.length).toBeGreaterThan(0);
    for (const network of [false, true]) {
      const r = await run(
        'ls /sys/class/net; cat /sys/class/net/*/address; find /sys -name address 2>/dev/null | head; ' +
          'grep -rhs . /sys/devices/virtual/net /sys/bus/pci/devices/*/net 2>/dev/null | head; echo end',
        { network },
      );
      expect(r.stdout).toContain('end');
      for (const mac of macs) expect(r.stdout + r.stderr).not.toContain(mac);
    }
  });

  it('/proc/keys and /proc/key-users show nothing', async () => {
    // The host's keyrings are there to be seen without the cover.
    expect(readFileSync('/proc/keys', 'utf8')).toContain('keyring');
    const hostUsers = readFileSync('/proc/key-users', 'utf8').trim();
    expect(hostUsers.length).toBeGreaterThan(0);
    const r = await run('cat /proc/keys /proc/key-users 2>&1; echo end');
    expect(r.stdout).not.toContain('keyring');
    expect(r.stdout).not.toContain(hostUsers.split('\n')[0]!.trim());
    expect(r.stdout).toContain('/proc/keys: Permission denied');
    expect(r.stdout).toContain('end');
  });

  it('ordinary programs that read /proc and /sys still work: node, python, nproc, git', async () => {
    const r = await run(
      'node -e "const os=require(\'os\'); console.log(os.cpus().length > 0, os.availableParallelism() > 0)" && ' +
        'python3 -c "import os, multiprocessing; print(os.cpu_count() > 0, multiprocessing.cpu_count() > 0)" && ' +
        'test "$(nproc)" -gt 0 && git init -q repo && git -C repo status --short && ' +
        'getconf _NPROCESSORS_ONLN && cat /proc/self/status | grep -c ^Pid && echo ok',
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^true true\nTrue True\n\d+\n1\nok\n$/);
    expect(r.exit_code).toBe(0);
  });
});

describe('where a program can write: the workspace, /tmp and a bounded /dev/shm, nothing more', () => {
  it('not /dev (a RAM-backed tmpfs the size of half the memory)', async () => {
    const r = await run(
      'touch /dev/x 2>&1; mkdir /dev/d 2>&1; ls /dev/x /dev/d 2>&1; echo >/dev/null && echo null-ok',
    );
    expect(r.stdout).toMatch(/Read-only file system/);
    expect(r.stdout).toContain('No such file or directory');
    expect(r.stdout).toContain('null-ok');
  });

  it('/dev/shm is as bounded as /tmp (max_memory_mb)', async () => {
    const r = await run(
      'dd if=/dev/zero of=/dev/shm/fill bs=1M count=64 2>&1 | grep -c "No space left"; stat -c %s /dev/shm/fill',
      { max_memory_mb: 32 },
    );
    const [full, size] = r.stdout.trim().split('\n');
    expect(full).toBe('1');
    expect(Number(size)).toBeLessThanOrEqual(32 * 1024 * 1024);
  });

  it('the covers over hidden folders (/root, /home, /run) take a page at most', async () => {
    const r = await run(
      'for d in /root /home /run /sys; do head -c 65536 /dev/zero 2>&1 > $d/fill | grep -c "No space left"; ' +
        'echo "$(stat -c %s $d/fill)"; done',
    );
    expect(r.stdout).toBe('1\n4096\n'.repeat(4));
  });
});
