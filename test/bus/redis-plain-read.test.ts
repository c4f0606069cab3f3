/**
 * How a daemon reads a listener's stream, as Redis sees it (MONITOR on the real redis-server at
 * 127.0.0.1:6379): while the entries it reads carry their frames (plain sends), with a plain
 * XREADGROUP behind the batch's script call, so the entries never pass through Lua; once an entry
 * wants its thread state (a call's message, a reply, into a frame the daemon does not hold), through
 * the script again, which reads that state with it; a call into a frame it holds, plainly, with the
 * partition's changes read right behind. Either way every message is delivered once, in order.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/bus/message.ts';
import { until } from '../../src/testing/index.ts';
import { dropGroup } from '../e2e/redis-support/harness.ts';
import { monitorCommands } from './redis-monitor.ts';
import { storeOnRedis } from './redis-store-daemon.ts';

const URL = 'redis://127.0.0.1:6379';
const GROUP = `organism-test-plain-read-${randomUUID().slice(0, 8)}`;

const raw = new Redis(URL, { lazyConnect: true });

afterAll(async () => {
  await dropGroup(URL, GROUP);
  await dropGroup(URL, `${GROUP}-idle`);
  await dropGroup(URL, `${GROUP}-count`);
  await dropGroup(URL, `${GROUP}-held`);
  await raw.quit();
});

type Daemon = ReturnType<typeof storeOnRedis>;
type Deliver = (m: Message, handled?: () => void) => Promise<void>;

/**
 * A daemon of group `group` on the test Redis, its commands seen by MONITOR through what `watch`
 * makes of its worker's stream key: `body` runs once the daemon receives events, with a handler
 * that has the thread store load what it needs, as the bus does, and records each delivered id in
 * `delivered`; everything is closed after.
 */
async function watched(
  group: string,
  watch: (stream: string) => Parameters<typeof monitorCommands>[1],
  body: (daemon: Daemon, deliver: Deliver, delivered: string[]) => Promise<void>,
): Promise<void> {
  const daemon = storeOnRedis(URL, group);
  const monitor = await monitorCommands(raw, watch(daemon.transport.keys.inbox('worker')));
  const delivered: string[] = [];
  // As the bus delivers: the thread store first (this daemon's copy of the thread, or a load).
  const deliver: Deliver = async (m, handled) => {
    await daemon.store.loadFor(m, false);
    delivered.push(m.id);
    handled?.();
  };
  try {
    await until(() => daemon.store.receivingEvents, 'the events subscription');
    await body(daemon, deliver, delivered);
  } finally {
    monitor.stop();
    await daemon.store.close();
    await daemon.transport.close();
  }
}

describe('redis reads', () => {
  it('reads plain sends with a plain XREADGROUP, and through the script once an entry wants its thread state', async () => {
    // XREADGROUPs of new entries of the stream without BLOCK: 'lua' when the script ran them.
    const reads: string[] = [];
    await watched(
      GROUP,
      (stream) => (args, source) => {
        if (args[0]?.toUpperCase() !== 'XREADGROUP' || !args.includes(stream) || args.includes('BLOCK'))
          return;
        if (args.at(-1) === '>') reads.push(source === 'lua' ? 'script' : 'plain');
      },
      async ({ transport, registry }, deliver, delivered) => {
        transport.subscribe('worker', deliver);
        const thread = registry.createThread();
        await transport.batch.drain();
        // Plain sends, one at a time: after the first read (the script's), plain reads.
        for (let i = 1; i <= 4; i++) {
          await transport.publish(message(thread.id, `p${i}`, true));
          await until(() => delivered.length === i, `plain send ${i} delivered`);
        }
        await until(() => reads.includes('plain'), 'a plain read');
        const before = reads.length;
        // Messages that do not carry their frames want their thread state: the next read after
        // one of them goes through the script again.
        await transport.publish(message(thread.id, 'c1', false));
        await until(() => delivered.length === 5, 'the first call delivered');
        await transport.publish(message(thread.id, 'c2', false));
        await until(() => delivered.length === 6, 'the second call delivered');
        await until(() => reads.slice(before).includes('script'), 'a read through the script');
        expect(delivered).toEqual(['m-p1', 'm-p2', 'm-p3', 'm-p4', 'm-c1', 'm-c2']);
      },
    );
  });

  it("reads calls into frames the daemon holds plainly, with the partition's changes read behind", async () => {
    // XREADGROUPs of new entries without BLOCK, and reads of the changes list (by its script).
    const reads: string[] = [];
    await watched(
      `${GROUP}-held`,
      (stream) => (args, source) => {
        const command = args[0]?.toUpperCase();
        if (command === 'LRANGE' && source === 'lua' && args[1]?.endsWith(':changes')) reads.push('changes');
        if (command !== 'XREADGROUP' || !args.includes(stream) || args.includes('BLOCK')) return;
        if (args.at(-1) === '>') reads.push(source === 'lua' ? 'script' : 'plain');
      },
      async ({ transport, registry }, deliver, delivered) => {
        transport.subscribe('worker', deliver);
        const thread = registry.createThread();
        const caller = registry.openFrame(thread, 'boss', 'api', null);
        await transport.batch.drain();
        for (let i = 1; i <= 4; i++) {
          const callee = registry.openFrame(thread, 'worker', 'boss', caller, 1);
          await transport.publish({ ...message(thread.id, `c${i}`, false), frame: callee.id, from: 'boss' });
          await until(() => delivered.length === i, `call ${i} delivered`);
        }
        // After the first read (the script's, with the thread state), plain reads, each with the
        // changes read right behind it.
        await until(() => reads.includes('plain'), 'a plain read');
        const plain = reads.indexOf('plain');
        expect(reads[plain + 1]).toBe('changes');
        expect(delivered).toEqual(['m-c1', 'm-c2', 'm-c3', 'm-c4']);
      },
    );
  });

  it('reads through the script after a blocking read found an entry that wants its thread state', async () => {
    // Every XREADGROUP of new entries of the stream: 'block' when it waits.
    const reads: string[] = [];
    await watched(
      `${GROUP}-idle`,
      (stream) => (args, source) => {
        if (args[0]?.toUpperCase() !== 'XREADGROUP' || !args.includes(stream) || args.at(-1) !== '>') return;
        reads.push(args.includes('BLOCK') ? 'block' : source === 'lua' ? 'script' : 'plain');
      },
      async ({ transport, registry }, deliver, delivered) => {
        transport.subscribe('worker', deliver);
        const thread = registry.createThread();
        await transport.publish(message(thread.id, 'p1', true));
        await until(() => delivered.length === 1, 'the plain send delivered');
        // Idle: the last read found nothing and waits; the call's message is what it finds.
        await until(() => reads.includes('plain') && reads.at(-1) === 'block', 'the reader waiting');
        const before = reads.length;
        await transport.publish(message(thread.id, 'c1', false));
        await until(() => delivered.length === 2, 'the call delivered');
        // The next read brings thread state along, as after a non-blocking read of the same entry.
        await until(() => reads.slice(before).includes('script'), 'a read through the script');
        expect(delivered).toEqual(['m-p1', 'm-c1']);
      },
    );
  });

  it("reads a thread's history count with its state only for a listener that reads histories", async () => {
    // The history lists whose length the script asked for.
    const counted: string[] = [];
    await watched(
      `${GROUP}-count`,
      // Only this group's keys: MONITOR sees every test file's commands on the shared Redis.
      () => (args, source) => {
        if (args[0]?.toUpperCase() === 'LLEN' && source === 'lua' && args[1]?.includes(`{${GROUP}-count}`))
          counted.push(args[1]!);
      },
      async ({ transport, registry }, deliver, delivered) => {
        const plain = registry.createThread();
        const agent = registry.createThread();
        // Waiting before the readers start: their first read, through the script, finds them.
        await transport.publish(message(plain.id, 'w1', false));
        await transport.publish({ ...message(agent.id, 'a1', false), to: 'agent' });
        transport.subscribe('worker', deliver, { readsHistory: false });
        transport.subscribe('agent', deliver);
        await until(() => delivered.length === 2, 'both delivered');
        await transport.batch.drain();
        expect(counted).toEqual([transport.keys.history(agent.id)]);
      },
    );
  });
});

/** A message to `worker` in `thread`; `carried`: it carries its frame (a plain send). */
function message(thread: string, id: string, carried: boolean): Message {
  return {
    id: `m-${id}`,
    thread,
    frame: `f-${id}`,
    from: 'api',
    to: 'worker',
    tag: 'ping',
    envelope: '<message/>',
    kind: 'message',
    hop: 1,
    time: Date.now(),
    ...(carried ? { frameDepth: 0 } : {}),
  };
}
