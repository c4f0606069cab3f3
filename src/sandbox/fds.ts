/**
 * File descriptors the process inherited from whoever started it. A supervisor or a shell redirect
 * (`organism run 40</other/.env 41>>/elsewhere/log`) can leave fds open without close-on-exec.
 * Node marks the inherited ones close-on-exec at start only up to the first gap after fd 15
 * (libuv's uv_disable_stdio_inheritance); libuv's spawn does not close the rest, and bwrap passes
 * every open fd through to the program. So a program in the sandbox could read and write files it
 * cannot see, through /proc/self/fd/N. Closing them in this process, once, before the first program
 * starts, keeps them out of every child: run_command's and stdio MCP servers' alike, whatever spawns
 * them, at no cost per call. Everything Node and libuv open themselves is close-on-exec already.
 */
import { closeSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** O_CLOEXEC in the octal `flags:` line of /proc/self/fdinfo/N. */
const O_CLOEXEC = 0o2000000;

export interface ClosedFd {
  fd: number;
  /** What it pointed at (a path, `pipe:[n]`, `socket:[n]`), for the operator's log. */
  target: string;
}

let done = false;

/**
 * Closes every fd above 2 without close-on-exec, except Node's own IPC channel (a process started
 * with `fork()` talks to its parent through it). Runs once per process: later calls return [].
 * Where /proc cannot be read, nothing is closed.
 */
export function closeInheritedFds(): ClosedFd[] {
  if (done) return [];
  done = true;
  const channel = (process as { channel?: { fd?: number } }).channel?.fd;
  const closed: ClosedFd[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return closed;
  }
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2 || fd === channel) continue;
    let flags: number;
    let target = '';
    try {
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
      flags = Number.parseInt(/^flags:\s*([0-7]+)/m.exec(info)?.[1] ?? '', 8);
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      // Gone already (the listing's own descriptor is one).
      continue;
    }
    if (Number.isNaN(flags) || (flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push({ fd, target });
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}
