/** A redis-server process of a test's own, for what the shared one on 6379 cannot show (restarts, a cluster). */
import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Spawns redis-server on 127.0.0.1:`port` with its files in `dir`: every write fsynced to the
 * append-only file and no RDB snapshots, so a restart finds every acknowledged write. `extra`
 * adds arguments (cluster mode).
 */
export function spawnRedisServer(port: number, dir: string, extra: string[] = []): ChildProcess {
  return spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      ...extra,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
    ],
    { stdio: 'ignore' },
  );
}
