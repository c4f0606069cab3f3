/**
 * The rejections nobody handled during each test of a file (an unhandled rejection ends a
 * daemon's process, which installs no handler for them): call at the file's top level, read the
 * returned list in a test.
 */
import { afterEach, beforeEach } from 'vitest';

export function unhandledRejections(): unknown[] {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  beforeEach(() => {
    seen.length = 0;
    process.on('unhandledRejection', listener);
  });
  afterEach(() => {
    process.off('unhandledRejection', listener);
  });
  return seen;
}
