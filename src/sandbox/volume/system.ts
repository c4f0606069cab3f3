/**
 * The system programs a workspace volume needs (mkfs.ext4, mount, umount, e2fsck, resize2fs, cp)
 * and whether this process may use them: mounting a file system image needs root, or
 * CAP_SYS_ADMIN in the machine's own user namespace, and a loop device.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { SandboxError } from '../../errors.ts';
import { findProgram } from '../which.ts';

/** Where the programs are looked for, whatever the daemon's own PATH. */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const PROGRAMS = ['mkfs.ext4', 'mount', 'umount', 'e2fsck', 'resize2fs', 'cp'] as const;

/** CAP_SYS_ADMIN's bit in /proc/self/status CapEff. */
const CAP_SYS_ADMIN = 21n;

export interface Privileges {
  uid: number;
  /** Effective capabilities (CapEff). */
  capEff: bigint;
  /** Whether this process is in the machine's initial user namespace (a mount there counts). */
  initialUserNs: boolean;
}

/** This process's uid, effective capabilities and user namespace. */
export function ownPrivileges(): Privileges {
  let capEff = 0n;
  try {
    const hex = /^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (hex) capEff = BigInt(`0x${hex}`);
  } catch {
    // no /proc: no capabilities known
  }
  let initialUserNs = false;
  try {
    // The initial namespace maps the whole range: "0 0 4294967295".
    initialUserNs = /^\s*0\s+0\s+4294967295\s*$/m.test(readFileSync('/proc/self/uid_map', 'utf8'));
  } catch {
    initialUserNs = false;
  }
  return { uid: process.getuid?.() ?? -1, capEff, initialUserNs };
}

/**
 * Why a volume cannot be mounted here, or null when it can: not privileged to mount, no loop
 * device, or a program missing. The reason says what to do.
 */
export function volumeUnavailable(privileges: Privileges = ownPrivileges()): string | null {
  if (process.platform !== 'linux') return 'size-bounded workspaces need Linux (loop-mounted ext4 images)';
  const admin = privileges.uid === 0 || ((privileges.capEff >> CAP_SYS_ADMIN) & 1n) === 1n;
  if (!admin || !privileges.initialUserNs) {
    return (
      'mounting its size-bounded volume (a loop-mounted ext4 image) needs root or CAP_SYS_ADMIN on the ' +
      `machine, and the daemon runs as uid ${privileges.uid}${privileges.initialUserNs ? '' : ' in a user namespace'}`
    );
  }
  if (!existsSync('/dev/loop-control')) {
    return 'there is no loop device here (/dev/loop-control is missing: load the loop module, or give the container /dev/loop-control)';
  }
  for (const program of PROGRAMS) {
    if (!findProgram(program, SYSTEM_PATH, '/').found) {
      return `${program} is not installed (Debian/Ubuntu: apt-get install e2fsprogs mount coreutils)`;
    }
  }
  return null;
}

/**
 * Runs a system program; a failure (an exit code not in `ok`) is a SandboxError `sandbox.volume`
 * with what it said.
 */
export function system(
  program: string,
  args: readonly string[],
  ok: readonly number[] = [0],
  timeoutMs = 120_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      { env: { PATH: SYSTEM_PATH, LANG: 'C' }, timeout: timeoutMs, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error || (typeof error.code === 'number' && ok.includes(error.code))) return resolve(stdout);
        const code = typeof error.code === 'number' ? `exit ${error.code}` : (error.code ?? error.message);
        const said = `${stderr}\n${stdout}`.trim().split('\n').slice(-2).join(' ');
        reject(new SandboxError('sandbox.volume', `${program} ${args.join(' ')} failed (${code}): ${said}`));
      },
    );
  });
}
