/**
 * Every sandbox default in one place: the tool_config keys run_command takes for its sandbox, and
 * the fixed parts of the bubblewrap sandbox (what the program's PATH, HOME and LANG are, which
 * credential files of the machine are hidden from every program).
 */
import type { SandboxKind } from './types.ts';

/** Defaults of `tool_config.run_command.{sandbox, network, max_processes, max_memory_mb}`. */
export const SANDBOX_CONFIG_DEFAULTS = {
  sandbox: 'bubblewrap' as SandboxKind,
  network: false,
  max_processes: 256,
  max_memory_mb: 1024,
} as const;

export const SANDBOX_KINDS: readonly SandboxKind[] = ['bubblewrap', 'none'];

export interface BubblewrapOptions {
  /**
   * The bwrap program: a path, or a name looked up on PATH. Default: `$ORGANISM_BWRAP` when set
   * (an unusual install, or a test pointing at a missing binary), else `bwrap`.
   */
  binary: string;
  /** PATH, HOME and LANG of the program inside (HOME is in the private /tmp, so it is thrown away). */
  path: string;
  home: string;
  lang: string;
  /**
   * Files and folders of the machine no program sees, whatever its config: password hashes, host
   * keys, other users' and root's homes, runtime sockets. Missing ones are skipped.
   */
  credentials: readonly string[];
  /**
   * `os.release()` and `process.getuid()`: as root, RLIMIT_NPROC does not bind, so the process
   * bound is the PID namespace's own pid_max, which the kernel has only from 6.14 on.
   */
  kernelRelease: string;
  uid: number;
  /**
   * What of /sys the program sees, read-only, over an empty /sys: the CPUs, which glibc, node and
   * python read to count them. The rest (network interfaces and their addresses, disks, firmware,
   * the cgroup tree with other services' names) needs no sharing; each bind costs every command.
   */
  sysShown: readonly string[];
  /** Files of the fresh /proc covered (unreadable): the kernel keyrings of the daemon's user. */
  procHidden: readonly string[];
}

export function defaultBubblewrapOptions(
  env: NodeJS.ProcessEnv = process.env,
  kernelRelease = '',
  uid = -1,
): BubblewrapOptions {
  return {
    binary: env.ORGANISM_BWRAP || 'bwrap',
    path: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    home: '/tmp',
    lang: 'C.UTF-8',
    credentials: [
      '/root',
      '/home',
      '/run',
      '/var/run',
      '/etc/shadow',
      '/etc/shadow-',
      '/etc/gshadow',
      '/etc/gshadow-',
      '/etc/sudoers',
      '/etc/sudoers.d',
      '/etc/ssl/private',
      '/etc/ssh',
      '/var/lib/sss',
      '/var/lib/redis',
      '/var/lib/postgresql',
      '/var/lib/mysql',
      '/var/lib/docker',
      '/var/lib/kubelet',
      '/var/spool/cron',
      '/var/mail',
      '/var/backups',
      // Keys and passwords a service keeps for root alone: only a root daemon's programs could read
      // them, and they should not. Folders of trust anchors next to them (/etc/pki/tls/certs, the
      // CA bundles) stay: programs need them for TLS.
      '/etc/letsencrypt',
      '/etc/pki/tls/private',
      '/etc/wireguard',
      '/etc/openvpn',
      '/etc/ipsec.secrets',
      '/etc/ipsec.d/private',
      '/etc/krb5.keytab',
      '/etc/NetworkManager/system-connections',
      '/etc/netplan',
      '/etc/mysql/debian.cnf',
      '/etc/kubernetes',
      '/etc/rancher',
      '/var/lib/rancher',
      '/etc/docker',
      '/etc/ceph',
      '/etc/gitlab-runner',
      '/var/lib/tailscale',
      // systemd's credentials for services, and the machine's logs (logins, other services' output).
      '/etc/credstore',
      '/etc/credstore.encrypted',
      '/var/log',
      // The daemon's own home and config folders, wherever they are (a service user's may be anywhere).
      ...[env.HOME, env.XDG_CONFIG_HOME, env.XDG_DATA_HOME].filter(
        (dir): dir is string => typeof dir === 'string' && dir.startsWith('/') && dir !== '/',
      ),
    ],
    kernelRelease,
    uid,
    sysShown: ['/sys/devices/system/cpu'],
    procHidden: ['/proc/keys', '/proc/key-users'],
  };
}
