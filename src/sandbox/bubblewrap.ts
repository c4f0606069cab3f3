/**
 * The bubblewrap sandbox. The program gets its own user, PID, IPC, UTS, cgroup and (unless
 * `network`) network namespaces and its own session; the machine's root read-only, a fresh /proc
 * (its keyrings covered), a read-only /dev, a /sys that shows only the CPUs, a private /tmp and
 * /dev/shm of bounded size; the workspace as the one folder that takes more than a page; and no
 * capabilities. The data dir, the config's folder, key files, homes and credential files are
 * covered (an empty one-page tmpfs over a folder, /dev/null over a file), so not even their names
 * show.
 *
 * Bounds: RLIMIT_DATA per process and RLIMIT_NPROC (through prlimit, inside). RLIMIT_NPROC does not
 * bind root, so when the daemon runs as root on a kernel that has per-namespace pid_max (6.14+), the
 * sandbox sits in an outer PID namespace whose pid_max is set first, and whose PIDs are taken from
 * 300 up from the start (see RESERVED_PIDS): no process inside can have more than that many
 * processes at once, whatever its uid, however many it has started before. Lifetime: everything
 * runs in the PID namespace, whose init is bwrap (or its child); killing it, or the daemon dying
 * (--die-with-parent, setpriv's --pdeathsig and unshare's --kill-child), kills every process in it,
 * setsid or not.
 */
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { release } from 'node:os';
import { isAbsolute, join, sep } from 'node:path';
import { SandboxError } from '../errors.ts';
import { sandboxEnv } from './env.ts';
import { closeInheritedFds } from './fds.ts';
import { type BubblewrapOptions, defaultBubblewrapOptions } from './options.ts';
import { probeBubblewrap } from './probe.ts';
import type { Sandbox, SandboxRequest, SpawnPlan } from './types.ts';
import { deviceOf } from './volume/mounts.ts';
import { heldVolumeDevice } from './volume/volume.ts';

/**
 * The kernel's RESERVED_PIDS: once a PID namespace has handed out a PID above it, new PIDs come from
 * [RESERVED_PIDS, pid_max) only. Left to itself a namespace starts at 1 and allows pid_max - 1
 * processes until then, and pid_max - 300 after (one at a time, with pid_max 301 as it was): so
 * its last PID is set to 300 before anything starts, and the bound holds from the first process.
 */
const RESERVED_PIDS = 300;

/** The kernel's PID_MAX_LIMIT: a larger pid_max is refused (an I/O error), as is any larger bound. */
const PID_MAX_LIMIT = 4_194_304;

/**
 * The kernel's settings in /proc, shown read-only (a bind from outside the sandbox; what a setting
 * reads is still the reader's: its network's, its PID namespace's). bwrap means to cover these,
 * but only where it finds them writable, and procfs says /proc/sys is not while it lets host root
 * write the files in it: the command of a daemon running as root could set kernel.core_pattern to
 * a program of its own, which the kernel would run as root outside the sandbox on the next crash.
 * Writing needs uid 0 of the host, so only a root daemon's commands could; the cover is there for
 * every daemon.
 */
const KERNEL_SETTINGS = ['/proc/sys', '/proc/sysrq-trigger'];

/** Size of the tmpfs over a hidden folder and over /sys: one page, so they hold nearly nothing. */
const COVER_BYTES = '4096';

/** Processes in the outer namespace besides the program's own: sh/bwrap, bwrap's init, and one more. */
const OWN_PROCESSES = 3;

/** `a` is `b` or inside it. */
export function within(a: string, b: string): boolean {
  return a === b || a.startsWith(b.endsWith(sep) ? b : b + sep);
}

/** Whether the kernel has per-PID-namespace pid_max (Linux 6.14). */
export function hasNamespacePidMax(release: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major > 6 || (major === 6 && minor >= 14);
}

interface Hidden {
  path: string;
  dir: boolean;
}

/** The real path, kind and device of `path`, or undefined when it does not exist. */
function inspect(path: string): (Hidden & { dev: number }) | undefined {
  try {
    const real = realpathSync(path);
    const info = statSync(real);
    return { path: real, dir: info.isDirectory(), dev: info.dev };
  } catch {
    return undefined;
  }
}

/** /etc/ssh's private host keys, and the like, are found by listing; done once. */
function expand(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const path of paths) {
    out.push(path);
    if (path === '/etc/ssh') {
      try {
        for (const name of readdirSync(path)) if (name.endsWith('_key')) out.push(join(path, name));
      } catch {
        // no /etc/ssh
      }
    }
  }
  return out;
}

/**
 * `--ro-bind` for each path to bring back, at the path as given (a symlinked folder on the way, or
 * a folder under /tmp, is then still found inside). None may be or hold a covered path: that would
 * undo the cover.
 */
function readOnlyBinds(paths: readonly string[], hidden: readonly Hidden[]): string[] {
  const args: string[] = [];
  for (const given of paths) {
    if (!isAbsolute(given))
      throw new SandboxError('sandbox.bad_request', `read-only path must be absolute: ${given}`);
    const real = inspect(given);
    if (!real) continue;
    const holds = hidden.find((h) => within(h.path, real.path));
    if (holds) {
      throw new SandboxError(
        'sandbox.bad_request',
        `read-only path ${given} holds ${holds.path}, which the program must not see`,
      );
    }
    args.push('--ro-bind', real.path, given);
  }
  return args;
}

export class BubblewrapSandbox implements Sandbox {
  readonly kind = 'bubblewrap' as const;
  readonly options: BubblewrapOptions;
  #credentials: Hidden[] | undefined;
  #pidMaxWritable = true;
  /** `--ro-bind /dev/null` (nodev: opening it is refused) over each of options.procHidden this kernel has. */
  readonly #procCovers: readonly string[];
  /** An empty read-only /sys with options.sysShown bound back; made once. */
  readonly #sysView: readonly string[];

  constructor(options: Partial<BubblewrapOptions> = {}) {
    const base = defaultBubblewrapOptions(
      process.env,
      options.kernelRelease ?? '',
      options.uid ?? process.getuid?.() ?? -1,
    );
    this.options = { ...base, ...options };
    if (this.options.kernelRelease === '') this.options.kernelRelease = release();
    // The sandbox's /proc is a fresh one of the same kernel: what is missing here is missing there,
    // and bwrap cannot cover a file that is not there.
    this.#procCovers = [
      ...this.options.procHidden.filter((p) => existsSync(p)).flatMap((p) => ['--ro-bind', '/dev/null', p]),
      ...KERNEL_SETTINGS.flatMap((p) => ['--ro-bind-try', p, p]),
    ];
    this.#sysView = [
      '--size',
      COVER_BYTES,
      '--tmpfs',
      '/sys',
      ...this.options.sysShown.flatMap((p) => ['--ro-bind-try', p, p]),
    ];
  }

  unavailable(): string | null {
    return probeBubblewrap(this);
  }

  /** Whether processes are bounded by the PID namespace's pid_max (root on Linux 6.14+). */
  get pidMaxBound(): boolean {
    return this.#pidMaxWritable && this.options.uid === 0 && hasNamespacePidMax(this.options.kernelRelease);
  }

  /**
   * The probe found /proc/sys read-only (a container's): processes are then bounded by
   * RLIMIT_NPROC alone, which root is not held to.
   */
  disablePidMax(): void {
    this.#pidMaxWritable = false;
  }

  plan(request: SandboxRequest): SpawnPlan {
    // Before the first program starts: only fds 0-2 may reach it (fds.ts).
    closeInheritedFds();
    for (const [what, path] of [
      ['workspace', request.workspace],
      ['cwd', request.cwd],
    ] as const) {
      if (!isAbsolute(path))
        throw new SandboxError('sandbox.bad_request', `${what} must be an absolute path: ${path}`);
    }
    const workspace = inspect(request.workspace);
    if (!workspace?.dir) {
      throw new SandboxError(
        'sandbox.bad_request',
        `the workspace ${request.workspace} does not exist or is not a folder`,
      );
    }
    const ws = workspace.path;
    // A workspace whose size-bounded volume this process mounted must still be on it (an admin's
    // `umount -l` would leave the unbounded folder underneath).
    const bound = heldVolumeDevice(ws);
    if (bound !== undefined && deviceOf(workspace.dev) !== bound) {
      throw new SandboxError(
        'sandbox.volume_gone',
        `the workspace ${ws} is no longer on its size-bounded volume (it was unmounted); restart the daemon to mount it again`,
      );
    }
    const { maxProcesses, maxMemoryMb } = request.limits;
    const memoryBytes = maxMemoryMb * 1024 * 1024;

    const args: string[] = [
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(request.network ? [] : ['--unshare-net']),
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
      '--ro-bind',
      '/',
      '/',
      // /dev is a tmpfs as big as half the memory: read-only, with a /dev/shm bounded like /tmp.
      '--dev',
      '/dev',
      '--size',
      String(memoryBytes),
      '--tmpfs',
      '/dev/shm',
      '--remount-ro',
      '/dev',
      '--proc',
      '/proc',
      ...this.#procCovers,
      ...this.#sysView,
      '--size',
      String(memoryBytes),
      '--tmpfs',
      '/tmp',
    ];

    // Covers around the workspace go before its bind, covers inside it after.
    const hidden = this.#hidden(request.hide, ws);
    // A folder's cover holds one page at most: a tmpfs is RAM, and a remount read-only would cost
    // a mount operation per cover on every command.
    const cover = (h: Hidden) =>
      h.dir ? ['--size', COVER_BYTES, '--tmpfs', h.path] : ['--ro-bind', '/dev/null', h.path];
    const around = hidden.filter((h) => !within(h.path, ws) || h.path === ws);
    const inside = hidden.filter((h) => within(h.path, ws) && h.path !== ws);
    for (const h of around) args.push(...cover(h));
    if (request.readOnly?.length)
      args.push(...readOnlyBinds(request.readOnly, this.#hiddenPaths(request.hide)));
    if (request.network) {
      // DNS: /etc/resolv.conf often points into /run, which is covered.
      const resolv = inspect('/etc/resolv.conf');
      if (resolv && hidden.some((h) => h.dir && within(resolv.path, h.path)))
        args.push('--ro-bind', resolv.path, resolv.path);
    }
    args.push('--bind', ws, ws);
    for (const h of inside) args.push(...cover(h));

    const cwd = inspect(request.cwd)?.path ?? request.cwd;
    if (!within(cwd, ws)) {
      throw new SandboxError('sandbox.bad_request', `cwd ${request.cwd} is not inside the workspace ${ws}`);
    }
    args.push('--chdir', cwd, '--clearenv');
    const env = sandboxEnv(request.envAllowlist, this.options, request.from);
    for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
    args.push('--');

    const spawnEnv = { PATH: this.options.path };
    if (!this.pidMaxBound) {
      args.push('prlimit', `--nproc=${maxProcesses}`, `--data=${memoryBytes}`, '--', ...request.argv);
      return { argv: [this.options.binary, ...args], cwd: ws, env: spawnEnv };
    }
    // As root RLIMIT_NPROC binds nobody and pid_max bounds the processes; RLIMIT_DATA is set by the
    // shell that sets pid_max and inherited through bwrap: one program fewer to start per command.
    // PID 1 (that shell, then bwrap) and [RESERVED_PIDS, pidMax): maxProcesses + OWN_PROCESSES.
    args.push(...request.argv);
    const pidMax = Math.min(PID_MAX_LIMIT, RESERVED_PIDS - 1 + maxProcesses + OWN_PROCESSES);
    return {
      argv: [
        'setpriv',
        '--pdeathsig',
        'KILL',
        '--',
        'unshare',
        '--pid',
        '--fork',
        '--kill-child',
        // A /proc of the new PID namespace: bwrap finds its child there by the PID it sees (301 up).
        '--mount-proc',
        '--',
        '/bin/sh',
        '-c',
        'echo "$1" > /proc/sys/kernel/pid_max && echo "$3" > /proc/sys/kernel/ns_last_pid && ' +
          'ulimit -d "$2" && shift 3 && exec "$@"',
        'sh',
        String(pidMax),
        String(memoryBytes / 1024),
        String(RESERVED_PIDS),
        this.options.binary,
        ...args,
      ],
      cwd: ws,
      env: spawnEnv,
    };
  }

  /** Every path the program must not see, real paths, before dropping what needs no cover of its own. */
  #hiddenPaths(paths: readonly string[]): Hidden[] {
    this.#credentials ??= expand(this.options.credentials).flatMap((p) => inspect(p) ?? []);
    return [...this.#credentials, ...paths.flatMap((p) => inspect(p) ?? [])];
  }

  /** What to cover: the request's paths and the machine's credentials, real paths, outside /tmp. */
  #hidden(paths: readonly string[], ws: string): Hidden[] {
    const out = new Map<string, Hidden>();
    for (const h of this.#hiddenPaths(paths)) {
      // /tmp is private already; only what the workspace under it brings back needs a cover.
      if (within(h.path, '/tmp') && !within(h.path, ws)) continue;
      // A config in / cannot have its folder covered; its files are covered one by one instead.
      if (h.path === '/') continue;
      out.set(h.path, h);
    }
    const all = [...out.values()];
    // Under another cover there is nothing left to cover, unless the workspace brings it back.
    const needed = all.filter(
      (h) => within(h.path, ws) || !all.some((d) => d.dir && d !== h && within(h.path, d.path)),
    );
    // Outer covers first, so an inner one is not buried under an outer tmpfs.
    return needed.sort((a, b) => a.path.length - b.path.length);
  }
}
