/**
 * Two daemons on one Redis keep one list of waiting approvals. Each ApprovalStore below stands for a
 * daemon (its own connection, its own in-process queue of index updates); both add and remove at
 * the same time. Every approval still waiting must be listed, and none that was decided.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { KvStore } from '../../src/kv/index.ts';
import { openRedisKvStore } from '../../src/kv/redis.ts';
import { ApprovalStore, type Requested } from '../../src/tools/approval/store.ts';
import { testState } from '../helpers/state.ts';

const URL = 'redis://127.0.0.1:6379';
const prefix = `organism-test:${randomUUID()}:`;
const opened: KvStore[] = [];

afterAll(async () => {
  await Promise.all(opened.map((kv) => kv.close()));
  const raw = new Redis(URL, { maxRetriesPerRequest: 1 });
  const keys = await raw.keys(`${prefix}*`);
  if (keys.length > 0) await raw.del(...keys);
  await raw.quit();
});

function daemon(): ApprovalStore {
  const kv = openRedisKvStore({ url: URL, keyPrefix: prefix });
  opened.push(kv);
  return new ApprovalStore(testState(kv));
}

function request(id: string): Requested {
  const now = Date.now();
  return {
    id,
    thread: 't1',
    listener: 'worker',
    tool: 'run_command',
    call_id: `call-${id}`,
    args: {},
    args_sha256: '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
    verdict: 'allow',
    rule_id: null,
    why: 'always',
    role: 'operator',
    requested: new Date(now).toISOString(),
    expires: new Date(now + 60_000).toISOString(),
  };
}

describe('approvals listed by two daemons on one Redis', () => {
  it('loses no waiting approval and keeps no decided one when both update the list at once', async () => {
    const a = daemon();
    const b = daemon();
    const fromA = Array.from({ length: 40 }, (_, i) => `ap_${'a'.repeat(20)}${String(i).padStart(4, '0')}`);
    const fromB = Array.from({ length: 40 }, (_, i) => `ap_${'b'.repeat(20)}${String(i).padStart(4, '0')}`);
    await Promise.all([
      ...fromA.map((id) => a.create(request(id))),
      ...fromB.map((id) => b.create(request(id))),
    ]);
    // Each daemon takes half of its own off the list (decided), again at the same time.
    const decided = [...fromA.slice(0, 20), ...fromB.slice(0, 20)];
    await Promise.all([
      ...fromA.slice(0, 20).map((id) => a.unlist(id)),
      ...fromB.slice(0, 20).map((id) => b.unlist(id)),
    ]);

    const listed = new Set(await a.pendingIds());
    const waiting = [...fromA.slice(20), ...fromB.slice(20)];
    expect(waiting.filter((id) => !listed.has(id))).toEqual([]);
    expect(decided.filter((id) => listed.has(id))).toEqual([]);
    expect(await b.pendingIds()).toEqual(await a.pendingIds());
  }, 30_000);
});
