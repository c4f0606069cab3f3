/**
 * A shutdown past its deadline leaves no rejection unhandled. `within` (src/bus/lifecycle.ts), which
 * every wait of a shutdown goes through, gave up on a promise without handling it when no time was
 * left: the Redis transport's close then disconnects, which rejects what still waits for Redis,
 * and an unhandled rejection ends a daemon's process.
 */
import { expect, it } from 'vitest';
import { within } from '../../src/bus/lifecycle.ts';
import { unhandledRejections } from '../helpers/unhandled.ts';

const unhandled = unhandledRejections();

/** Lets a rejection that nobody handles reach the process's event. */
const aTurn = () => new Promise((resolve) => setTimeout(resolve, 20));

it('within(): a promise it has no time to wait for rejects later, handled', async () => {
  let reject!: (error: Error) => void;
  const pending = new Promise((_, r) => {
    reject = r;
  });
  expect(await within(pending, 0)).toBe(false);
  reject(new Error('Connection is closed.'));
  await aTurn();
  expect(unhandled).toEqual([]);
});
