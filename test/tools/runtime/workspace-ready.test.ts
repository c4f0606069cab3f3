/**
 * The daemon mounts the workspace's size-bounded volume while it loads the rest (mkfs and mount are
 * programs of their own), and hands the mount under way to the dispatcher as `ready`: no call may
 * run before the bound is in place, and a mount that failed fails every call with its reason.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { makeDispatcher, memoryAudit, noopTool } from './helpers.ts';

const grants = [{ name: 'alice', tools: ['noop'] }];
const call = { tool: 'noop', args: {}, listener: 'alice', thread: 't' };

/** A promise settled from outside, as a mount under way is. */
function pending() {
  let settle!: { resolve: () => void; reject: (error: Error) => void };
  const promise = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  return { promise, ...settle };
}

describe('calls while the workspace volume is still being mounted', () => {
  it('wait for the mount, then run', async () => {
    const noop = noopTool();
    const mount = pending();
    const d = makeDispatcher([noop], grants, { ready: mount.promise });
    const answer = d.call(call);
    await sleep(50);
    expect(noop.runs).toHaveLength(0);
    mount.resolve();
    expect(await answer).toMatchObject({ status: 'ok' });
    expect(noop.runs).toHaveLength(1);
    // Once mounted, calls go straight through.
    expect(await d.call({ ...call, thread: 'u' })).toMatchObject({ status: 'ok' });
  });

  it('all fail with the reason when the mount failed, and nothing runs', async () => {
    const noop = noopTool();
    const audit = memoryAudit();
    const mount = pending();
    const d = makeDispatcher([noop], grants, { ready: mount.promise, audit });
    const answer = d.call(call);
    mount.reject(new Error('organism.workspace holds 20 MiB, more than organism.workspace_max_bytes'));
    for (const result of [await answer, await d.call({ ...call, thread: 'u' })]) {
      expect(result.status).toBe('error');
      if (result.status === 'ok') throw new Error('unreachable');
      expect(result.error.message).toContain('more than organism.workspace_max_bytes');
    }
    expect(noop.runs).toHaveLength(0);
    expect(audit.entries.map((e) => (e as { outcome?: string }).outcome)).toEqual(['error', 'error']);
  });
});
