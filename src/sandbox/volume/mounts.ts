/**
 * What is mounted where, read from /proc/self/mountinfo, and which file backs a loop device: enough
 * to tell whether a folder is already the mount point of its volume (a daemon that was killed left
 * it mounted, or another organism process is using it) before mounting it again.
 */
import { readFileSync } from 'node:fs';

export interface MountEntry {
  /** `major:minor` of the mounted device (st_dev of files on it). */
  device: string;
  mountPoint: string;
  fsType: string;
  /** `/dev/loop3`, `tmpfs`, ... */
  source: string;
}

/** mountinfo escapes space, tab, newline and backslash as \NNN (octal). */
function unescapeField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** The mount on top at `path` (an absolute real path), or undefined when it is not a mount point. */
export function mountAt(path: string): MountEntry | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
  let found: MountEntry | undefined;
  for (const line of text.split('\n')) {
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    const fields = line.split(' ');
    if (fields.length < 10) continue;
    const mountPoint = unescapeField(fields[4]!);
    if (mountPoint !== path) continue;
    const dash = fields.indexOf('-', 6);
    if (dash < 0) continue;
    // Later lines are mounted over earlier ones: the last one at the path is what it shows.
    found = {
      device: fields[2]!,
      mountPoint,
      fsType: fields[dash + 1] ?? '',
      source: unescapeField(fields[dash + 2] ?? ''),
    };
  }
  return found;
}

/** The file behind the loop device `major:minor`, or undefined when it is no loop device. */
export function loopBackingFile(device: string): string | undefined {
  try {
    return readFileSync(`/sys/dev/block/${device}/loop/backing_file`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** st_dev as mountinfo writes it (`major:minor`). */
export function deviceOf(dev: number): string {
  // Linux's new_encode_dev: minor's low 8 bits, then major, then minor's high bits.
  const major = (dev >> 8) & 0xfff;
  const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
  return `${major}:${minor}`;
}
