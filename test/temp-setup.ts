/**
 * The run's temp folder. vitest.config.ts gives the test workers (and every daemon, sandbox and
 * browser they start) a TMPDIR of their own under the system's temp folder; at the end of the run
 * it is removed whole, so no test's leftovers (a killed daemon's data dir, a project a failing test
 * did not clean up) pile up in /tmp run after run: they used to, by the thousand.
 *
 * Before that, the workspace volumes the suite's daemons leave mounted. As root, every daemon mounts its workspace
 * on a loop-mounted ext4 image (organism.workspace_max_bytes, 1 GiB by default), and the last
 * process to let go unmounts it; a daemon a test kills with SIGKILL lets go of nothing. A mount
 * left that way is the runtime's to find again (volume.ts), but in the suite nothing comes back
 * for it: each run left 40 to 70 of them, and with hundreds mounted every sandboxed program starts
 * slower (bubblewrap copies the mount table) and loop devices run out. At the end of the run, the
 * loop mounts under the temp folder that were not there at its start are unmounted.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

/** Mount points of loop devices under the temp folder, from /proc/self/mountinfo. */
function loopMountsUnderTmp(): Set<string> {
  const found = new Set<string>();
  let text = '';
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return found; // not Linux: no volumes either
  }
  const tmp = `${tmpdir()}/`;
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    if (dash < 0) continue;
    const mountPoint = fields[4]!.replace(/\\([0-7]{3})/g, (_, o: string) =>
      String.fromCharCode(Number.parseInt(o, 8)),
    );
    if (mountPoint.startsWith(tmp) && (fields[dash + 2] ?? '').startsWith('/dev/loop')) found.add(mountPoint);
  }
  return found;
}

let before = new Set<string>();

export function setup(): void {
  before = loopMountsUnderTmp();
}

export function teardown(): void {
  // Deepest first, in case one was mounted inside another.
  const left = [...loopMountsUnderTmp()].filter((m) => !before.has(m)).sort((a, b) => b.length - a.length);
  for (const mountPoint of left) spawnSync('umount', [mountPoint], { stdio: 'ignore' });
  if (left.length > 0)
    console.log(`temp-setup: unmounted ${left.length} workspace volumes that killed daemons left`);
  const runTmp = process.env.ORGANISM_TEST_TMP;
  // A mount still inside (umount refused: busy) keeps the folder; rm would empty the volume first.
  const busy = [...loopMountsUnderTmp()].some((m) => runTmp && m.startsWith(`${runTmp}/`));
  if (runTmp && !busy) rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
}
