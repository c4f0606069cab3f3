/**
 * The shared thread store (src/bus/transport/redis/thread-store.ts) against the real redis-server on
 * 127.0.0.1:6379, below the bus: what only timing between a daemon and Redis can show.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../../src/bus/history/memory.ts';
import type { Message } from '../../src/bus/message.ts';
import { CHANGES_PER_READ, readChanges } from '../../src/bus/transport/redis/batch.ts';
import type { RedisTransport } from '../../src/bus/transport/redis/index.ts';
import { until } from '../../src/testing/index.ts';
import { dropGroup } from '../e2e/redis-support/harness.ts';
import { type RedisStoreDaemon, storeOnRedis } from './redis-store-daemon.ts';

const URL = 'redis://127.0.0.1:6379';
const GROUP = `organism-test-store-${randomUUID().slice(0, 8)}`;

const raw = new Redis(URL, { lazyConnect: true });

afterAll(async () => {
  await dropGroup(URL, GROUP);
  await raw.quit();
});

type Daemon = RedisStoreDaemon;

/** Runs `body` with `count` daemons' thread stores on Redis, and closes them after it. */
async function onRedis(count: number, body: (...daemons: Daemon[]) => Promise<void>): Promise<void> {
  const daemons = Array.from({ length: count }, () => storeOnRedis(URL, GROUP));
  try {
    await until(() => daemons.every((d) => d.store.receivingEvents), 'the events subscriptions');
    await body(...daemons);
  } finally {
    for (const { store, transport } of daemons) {
      await store.close();
      await transport.close();
    }
  }
}

describe('redis thread store', () => {
  it('counts the first message of a thread made in the same turn as in flight', async () => {
    await onRedis(1, async ({ transport, store, registry }) => {
      const thread = registry.createThread();
      store.published(thread.id);
      await transport.batch.drain();
      expect(await raw.hget(transport.keys.thread(thread.id), 'inflight')).toBe('1');
    });
  });

  it('does not bring back a frame it pruned when a state read sent before the prune answers with it', async () => {
    await onRedis(1, async ({ transport, store, registry }) => {
      const thread = registry.createThread();
      // A frame with a parent is kept in Redis (a parentless one travels with its message).
      const caller = registry.openFrame(thread, 'boss', 'api', null);
      const frame = registry.openFrame(thread, 'worker', 'boss', caller, 1);
      await transport.batch.drain(); // the thread and its frame are in Redis
      expect(await fields(transport, thread.id)).toContain(`f:${frame.id}`);
      // A read of the frame's state goes out; the frame is pruned here before its answer is in.
      const stale = store.load(thread.id, frame.id);
      transport.batch.flush();
      registry.pruneFrame(frame);
      await stale;
      expect(registry.frame(frame.id)).toBeUndefined();
      // Once the deletion is in Redis, a load finds the frame gone there as well.
      await transport.batch.drain();
      await store.load(thread.id, frame.id);
      expect(registry.frame(frame.id)).toBeUndefined();
      expect(await raw.hexists(transport.keys.thread(thread.id), `f:${frame.id}`)).toBe(0);
    });
  });

  it('deletes the record of a frame pruned twice once', async () => {
    await onRedis(1, async ({ transport, registry }) => {
      const thread = registry.createThread();
      const caller = registry.openFrame(thread, 'boss', 'api', null);
      const frame = registry.openFrame(thread, 'worker', 'boss', caller, 1);
      await transport.batch.drain();
      const deleted: string[] = [];
      const prune = transport.batch.prune.bind(transport.batch);
      transport.batch.prune = (key, frameId) => {
        deleted.push(frameId);
        prune(key, frameId);
      };
      // As a responder's frame is: once it answered, and again once its handler finished.
      registry.pruneFrame(frame);
      registry.pruneFrame(frame);
      await transport.batch.drain();
      expect(deleted).toEqual([frame.id]);
      expect(await fields(transport, thread.id)).not.toContain(`f:${frame.id}`);
    });
  });

  it('keeps no record of a frame that links to no parent until something refers to it', async () => {
    await onRedis(1, async ({ transport, store, registry }) => {
      const thread = registry.createThread();
      const sent = registry.openFrame(thread, 'worker', 'api', null);
      const replied = registry.openFrame(thread, 'boss', 'api', null);
      const parent = registry.openFrame(thread, 'lead', 'api', null);
      await transport.batch.drain();
      expect(await fields(transport, thread.id)).not.toContain(`f:${sent.id}`);
      // A reply or report sent into a frame, or a frame opened below it: written then, before it.
      store.published(thread.id, replied);
      const child = registry.openFrame(thread, 'worker', 'lead', parent, 1);
      await transport.batch.drain();
      const written = await fields(transport, thread.id);
      expect(written).toEqual(expect.arrayContaining([`f:${replied.id}`, `f:${parent.id}`, `f:${child.id}`]));
      expect(written).not.toContain(`f:${sent.id}`);
      // Pruning deletes the records this daemon wrote.
      registry.pruneFrame(parent);
      await transport.batch.drain();
      expect(await fields(transport, thread.id)).not.toContain(`f:${parent.id}`);
      expect(await fields(transport, thread.id)).not.toContain(`f:${child.id}`);
    });
  });

  it('leaves alone the record of a frame it never wrote when it prunes its copy: another daemon may have written it', async () => {
    await onRedis(2, async (a, b) => {
      const thread = a.registry.createThread();
      const sent = a.registry.openFrame(thread, 'worker', 'api', null);
      await a.transport.batch.drain();
      expect(await fields(a.transport, thread.id)).not.toContain(`f:${sent.id}`);
      // b takes the message, which carries the frame, and opens a frame below it: b writes both.
      await b.store.loadFor(carrying(thread.id, sent.id, 1), false);
      const carried = b.registry.frame(sent.id)!;
      const below = b.registry.openFrame(b.registry.thread(thread.id)!, 'helper', 'worker', carried, 4);
      await b.transport.batch.drain();
      expect(await fields(b.transport, thread.id)).toEqual(
        expect.arrayContaining([`f:${sent.id}`, `f:${below.id}`]),
      );
      // a forgets its own copy, never written by it: b's record stays, and b can still load it.
      a.registry.pruneFrame(sent);
      await a.transport.batch.drain();
      expect(await fields(a.transport, thread.id)).toEqual(
        expect.arrayContaining([`f:${sent.id}`, `f:${below.id}`]),
      );
      b.registry.collectIdle(Date.now() + 3_600_000); // b forgets the thread, then loads it again
      await b.store.load(thread.id, sent.id);
      expect(b.registry.frame(sent.id)).toMatchObject({ id: sent.id, listener: 'worker', caller: 'api' });
    });
  });

  it('rebuilds on another daemon a frame that its message carries, loading the thread once', async () => {
    await onRedis(2, async (a, b) => {
      const thread = a.registry.createThread();
      const frame = a.registry.openFrame(thread, 'worker', 'api', null, 3);
      a.registry.chargeHop(thread, 3);
      await a.transport.batch.drain();
      // Redis has no record of the frame: without the copy the message carries, it is unknown.
      await b.store.load(thread.id, frame.id);
      expect(b.registry.frame(frame.id)).toBeUndefined();
      b.registry.collectIdle(Date.now() + 3_600_000); // b forgets the thread again
      // First contact: b does not know the thread, so it is loaded (a promise), frame from the message.
      const first = carrying(thread.id, frame.id, 1);
      const loading = b.store.loadFor(first, false);
      expect(loading).toBeInstanceOf(Promise);
      await loading;
      expect(b.registry.frame(frame.id)).toEqual(frame);
      expect(b.registry.thread(thread.id)?.hops).toBe(1);
      // Known now: the next such message needs no round trip, and its hop count is taken up.
      const next = carrying(thread.id, 'f-next', 7);
      expect(b.store.loadFor(next, false)).toBeUndefined();
      expect(b.registry.frame('f-next')).toMatchObject({
        listener: 'worker',
        caller: 'api',
        parent: null,
        depth: 3,
      });
      expect(b.registry.thread(thread.id)?.hops).toBe(7);
      // An agent reads the whole history, so its delivery still asks Redis.
      const agent = b.store.loadFor(carrying(thread.id, 'f-agent', 8), true);
      expect(agent).toBeInstanceOf(Promise);
      await agent;
    });
  });

  it('asks Redis for the history count a read left out when the delivery needs the whole history', async () => {
    await onRedis(2, async (a, b) => {
      const thread = a.registry.createThread();
      const frame = a.registry.openFrame(thread, 'worker', 'api', null);
      a.history.append(thread.id, entry('e0'));
      await a.transport.batch.drain();
      await b.store.load(thread.id, '', true);
      expect(b.history.summary(thread.id)?.messages).toBe(1);
      a.history.append(thread.id, entry('e1'));
      a.history.append(thread.id, entry('e2'));
      await a.transport.batch.drain();
      // State as a read for a listener that reads no history brings it: no count.
      const [created, scope, hops, stopped, inflight] = (await b.transport.batch.load(
        b.transport.keys.thread(thread.id),
        false,
        '',
      ))!;
      b.store.preload(thread.id, frame.id, [created!, scope!, hops!, stopped!, inflight!, null, null, null]);
      // Delivered to an agent after all (the listener changed since): the count is asked for.
      await b.store.loadFor({ ...carrying(thread.id, frame.id, 1), frameDepth: undefined }, true);
      expect(b.history.messages(thread.id)?.messages.map((m) => m.id)).toEqual(['e0', 'e1', 'e2']);
    });
  });
});

it('reads every thread from Redis again after its events connection was cut (stops sent meanwhile are lost)', async () => {
  await onRedis(2, async (a, b) => {
    const thread = a.registry.createThread();
    await a.transport.batch.drain();
    await b.store.loadFor(carrying(thread.id, 'f-1', 1), false);
    expect(b.store.loadFor(carrying(thread.id, 'f-2', 2), false)).toBeUndefined();
    // The connection is cut: a stop made now reaches b only through Redis.
    const name = `organism-${b.transport.consumer}-events`;
    const clients = (await raw.call('CLIENT', 'LIST')) as string;
    const id = /id=(\d+) [^\n]*name=(\S+)/g;
    for (const [, client, named] of clients.matchAll(id)) {
      if (named === name) await raw.call('CLIENT', 'KILL', 'ID', client!);
    }
    await until(() => !b.store.receivingEvents, 'the cut');
    a.registry.thread(thread.id)!.stopped = true;
    await raw.hset(a.transport.keys.thread(thread.id), 'stopped', '1');
    await until(() => b.store.receivingEvents, 'the events connection back');
    const again = b.store.loadFor(carrying(thread.id, 'f-3', 3), false);
    expect(again).toBeInstanceOf(Promise);
    await again;
    expect(b.registry.thread(thread.id)?.stopped).toBe(true);
  });
});

describe("a delivery on this daemon's copy of its thread (the changes list)", () => {
  /** A daemon's side of a read: the partition's changes read behind it, applied before its dispatch. */
  async function dispatching(d: Daemon): Promise<void> {
    d.store.trusting(0, await readChanges(d.transport.client, d.store.changesFrom(0)));
  }

  /** a opens a caller's frame and a frame below it (a call): both are written to Redis. */
  async function aCall(a: Daemon) {
    const thread = a.registry.createThread();
    const caller = a.registry.openFrame(thread, 'boss', 'api', null);
    const callee = a.registry.openFrame(thread, 'worker', 'boss', caller, 1);
    await a.transport.batch.drain();
    return { thread, caller, callee };
  }

  it('goes on the copy when no change came since it was read', async () => {
    await onRedis(2, async (a, b) => {
      const { thread, callee } = await aCall(a);
      await b.store.load(thread.id, callee.id);
      await dispatching(b);
      expect(b.store.loadFor(calling(thread.id, callee.id, 2), false)).toBeUndefined();
      expect(b.registry.thread(thread.id)?.hops).toBe(2);
    });
  });

  it('does not deliver into a frame another daemon pruned after this one read it', async () => {
    await onRedis(2, async (a, b) => {
      const { thread, caller, callee } = await aCall(a);
      await b.store.load(thread.id, callee.id); // b holds the thread, the frame and its parent
      expect(b.registry.frame(callee.id)).toBeDefined();
      // The callee answered on a: its frame is pruned there, its record deleted from Redis.
      a.registry.pruneFrame(callee);
      await a.transport.batch.drain();
      // A message into that frame reaches b (sent by a daemon that had not heard yet): b's copy
      // still has the frame, but the changes read behind the entry take it out first.
      await dispatching(b);
      expect(b.registry.frame(callee.id)).toBeUndefined();
      const loading = b.store.loadFor(calling(thread.id, callee.id, 2), false);
      expect(loading).toBeInstanceOf(Promise);
      await loading;
      expect(b.registry.frame(callee.id)).toBeUndefined(); // nothing to deliver into
      expect(b.registry.frame(caller.id)).toBeDefined();
      // Nor does a state read from before the prune bring the frame back.
      const record = JSON.stringify(['worker', 'boss', caller.id, 1]);
      b.store.preload(thread.id, callee.id, ['1', '', '1', '0', '1', record, null, null]);
      await b.store.load(thread.id, callee.id);
      expect(b.registry.frame(callee.id)).toBeUndefined();
    });
  });

  it('does not deliver into a thread another daemon stopped after this one read it', async () => {
    await onRedis(2, async (a, b) => {
      const { thread, callee } = await aCall(a);
      await b.store.load(thread.id, callee.id);
      // The events connection does not tell b here (it lags behind, or the event is lost).
      b.store.subscriber!.disconnect();
      await until(() => !b.store.receivingEvents, 'the events connection closed');
      a.history.append(thread.id, entry('e0'));
      a.history.markStopped(thread.id);
      await a.transport.batch.drain();
      expect(b.registry.thread(thread.id)?.stopped).toBe(false);
      await dispatching(b);
      expect(b.registry.thread(thread.id)?.stopped).toBe(true);
    });
  });

  it('reads the thread again when changes it had not applied were trimmed away', async () => {
    await onRedis(2, async (a, b) => {
      const { thread, callee } = await aCall(a);
      await b.store.load(thread.id, callee.id);
      await dispatching(b);
      // 4,000 changes later the list keeps the last 2,000: b's position is no longer in it.
      await raw.incrby(`${b.transport.keys.changes(0)}:trimmed`, 4_000);
      await dispatching(b);
      const loading = b.store.loadFor(calling(thread.id, callee.id, 2), false);
      expect(loading).toBeInstanceOf(Promise);
      await loading;
      // Read again, the copy serves once more.
      await dispatching(b);
      expect(b.store.loadFor(calling(thread.id, callee.id, 3), false)).toBeUndefined();
    });
  });

  it('keeps the changes list short, and a position in it means the same change after a trim', async () => {
    await onRedis(1, async ({ transport, registry }) => {
      const key = transport.keys.changes(0);
      const positions = async () => (await raw.llen(key)) + Number((await raw.get(`${key}:trimmed`)) ?? 0);
      const base = await positions(); // the changes of this file's other tests
      const thread = registry.createThread();
      const caller = registry.openFrame(thread, 'boss', 'api', null);
      const ids: string[] = [];
      for (let i = 0; i < 4_100; i++) {
        const frame = registry.openFrame(thread, 'worker', 'boss', caller, 1);
        ids.push(frame.id);
        registry.pruneFrame(frame);
      }
      await transport.batch.drain();
      const kept = await raw.llen(key);
      const trimmed = Number(await raw.get(`${key}:trimmed`));
      expect(kept).toBeLessThanOrEqual(4_000);
      expect(await positions()).toBe(base + 4_100);
      // From a position trimmed away: the gap is said, and what is left comes from its start.
      const [start, gap, count] = await readChanges(transport.client, [key, 0]);
      expect([start, gap, count]).toEqual([trimmed, 1, Math.min(kept, CHANGES_PER_READ)]);
      // From a position still kept: that change first, then the ones after it.
      const [at, none, , lines] = await readChanges(transport.client, [key, base + 4_000]);
      expect([at, none]).toEqual([base + 4_000, 0]);
      expect(lines.split('\n')).toEqual(ids.slice(4_000).map((id) => `p|${id}|${thread.id}`));
    });
  });

  it('reads the thread when the changes were not all read, or not read at all', async () => {
    await onRedis(2, async (a, b) => {
      const { thread, callee } = await aCall(a);
      await b.store.load(thread.id, callee.id);
      b.store.trusting(0, undefined); // a read through the script, or the changes' read failed
      const loading = b.store.loadFor(calling(thread.id, callee.id, 2), false);
      expect(loading).toBeInstanceOf(Promise);
      await loading;
      // As many as one read takes: there may be more behind them.
      const [start] = await readChanges(b.transport.client, b.store.changesFrom(0));
      const lines = Array(CHANGES_PER_READ).fill('s||t-none').join('\n');
      b.store.trusting(0, [start, 0, CHANGES_PER_READ, lines]);
      const again = b.store.loadFor(calling(thread.id, callee.id, 3), false);
      expect(again).toBeInstanceOf(Promise);
      await again;
    });
  });
});

/** A call's message into `frame` (it carries no frame of its own: the frame has a parent). */
function calling(thread: string, frame: string, hop: number): Message {
  const { frameDepth: _, ...message } = carrying(thread, frame, hop);
  return { ...message, from: 'boss' };
}

/** A message from `api` to `worker` that opens (and carries) frame `frame` at depth 3. */
function carrying(thread: string, frame: string, hop: number): Message {
  return {
    id: `m-${frame}`,
    thread,
    frame,
    from: 'api',
    to: 'worker',
    tag: 'ping',
    envelope: '<message/>',
    kind: 'message',
    hop,
    time: Date.now(),
    frameDepth: 3,
  };
}

function entry(id: string): HistoryEntry {
  return { id, from: 'api', to: 'worker', kind: 'message', payload: '<ping/>', time: Date.now() };
}

/** Field names of a thread's hash in Redis. */
function fields(transport: RedisTransport, thread: string): Promise<string[]> {
  return raw.hkeys(transport.keys.thread(thread));
}
