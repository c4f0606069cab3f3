/**
 * Takes a lock in another process, for the dir-lock tests. Usage:
 *   node --import tsx lock-holder.ts <dir> <name> [hold|try]
 * hold: takes it, prints `held <pid>`, keeps it until killed (or stdin closes).
 * try: prints `ready`, waits for a line on stdin (so several start together), tries once, prints `held <pid>` or
 * `refused <holder pid>`, releases and exits.
 */
import { acquireDirLock } from '../../../src/storage/dir-lock.ts';

const [dir, name, mode = 'hold'] = process.argv.slice(2);
if (!dir || !name) throw new Error('usage: lock-holder.ts <dir> <name> [hold|try]');

if (mode === 'try') {
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
}
try {
  // LOCK_HOLDER_PAUSE_MS: a pause between finding the lock stale and taking it over, so that
  // starters racing for it all find it stale before any of them takes it.
  const pause = Number(process.env.LOCK_HOLDER_PAUSE_MS ?? 0);
  const lock = await acquireDirLock({
    dir,
    name,
    beforeTakeover: () => new Promise((resolve) => setTimeout(resolve, pause)),
  });
  lock.announce({ url: 'http://127.0.0.1:1' });
  process.stdout.write(`held ${process.pid}\n`);
  if (mode === 'try') {
    // Held a moment, so a starter that wrongly took it over as well would be caught holding it too.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await lock.release();
    process.exit(0);
  }
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
  setInterval(() => {}, 1 << 30);
} catch (error) {
  const holder = (error as { details?: { holder?: { pid?: number } } }).details?.holder;
  process.stdout.write(`refused ${holder?.pid ?? 'unknown'} ${(error as Error).message}\n`);
  process.exit(0);
}
