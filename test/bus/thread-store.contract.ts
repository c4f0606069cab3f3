/**
 * The one case file every ThreadStore runs (thread-store.test.ts: the in-process store and the
 * Redis one). What all stores promise: loading a thread or a delivered message brings the
 * registry current without losing what this daemon has, a thread nobody made stays unknown,
 * watch and close are safe, and `shared` tells the truth (a second daemon over the same state
 * sees this one's threads exactly when the store is shared). Shared stores also count in flight
 * across daemons.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ThreadHistory } from '../../src/bus/history/index.ts';
import type { Message } from '../../src/bus/message.ts';
import type { ThreadStore } from '../../src/bus/thread-store.ts';
import type { Frame, ThreadRegistry, ThreadState } from '../../src/bus/threads.ts';

/** One daemon's view: its store attached to its registry and history. */
export interface StoreDaemon {
  store: ThreadStore;
  registry: ThreadRegistry;
  history: ThreadHistory;
  /** Resolves once this daemon's writes are where other daemons read them (nothing to do in-process). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface ThreadStoreHarness {
  /** A daemon over fresh, empty state. */
  fresh(): Promise<StoreDaemon>;
  /** Another daemon over the same state as `of` (for a store that shares nothing: its own). */
  peer(of: StoreDaemon): Promise<StoreDaemon>;
  /** Whether the store shares thread state between daemons. */
  shared: boolean;
}

/** A message of `thread` delivered into `frame`, carrying the frame as a parentless one travels. */
function messageInto(thread: ThreadState, frame: Frame): Message {
  return {
    id: `m-${frame.id}`,
    thread: thread.id,
    frame: frame.id,
    from: frame.caller,
    to: frame.listener,
    tag: 'ping',
    envelope: '<ping/>',
    kind: 'message',
    hop: thread.hops,
    time: Date.now(),
    frameDepth: frame.depth,
  };
}

export function threadStoreContract(name: string, harness: ThreadStoreHarness): void {
  describe(`ThreadStore contract: ${name}`, () => {
    const open: StoreDaemon[] = [];
    const fresh = async () => {
      const d = await harness.fresh();
      open.push(d);
      return d;
    };
    const peer = async (of: StoreDaemon) => {
      const d = await harness.peer(of);
      open.push(d);
      return d;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((d) => d.close().catch(() => {})));
    });

    it('says whether it is shared, and only a shared store follows the registry', async () => {
      const { store } = await fresh();
      expect(store.shared).toBe(harness.shared);
      const observer = store as Partial<Record<'threadCreated' | 'frameOpened' | 'framesPruned', unknown>>;
      for (const method of ['threadCreated', 'frameOpened', 'framesPruned'] as const) {
        expect(typeof observer[method]).toBe(harness.shared ? 'function' : 'undefined');
      }
    });

    it('loads a thread made on this daemon without losing its frames, hops or history', async () => {
      const d = await fresh();
      const thread = d.registry.createThread();
      d.history.begin(thread.id, thread.created);
      d.history.append(thread.id, {
        id: 'h1',
        from: 'api',
        to: 'worker',
        kind: 'message',
        payload: '<ping/>',
        time: 1,
      });
      // A frame with a parent (a parentless one travels with its message instead, see loadFor).
      const caller = d.registry.openFrame(thread, 'boss', 'api', null);
      const frame = d.registry.openFrame(thread, 'worker', 'boss', caller, 1);
      d.registry.chargeHop(thread, 0);
      await d.store.load(thread.id);
      await d.store.load(thread.id, frame.id, true);
      expect(d.registry.thread(thread.id)).toBe(thread);
      expect(thread.hops).toBe(1);
      expect(d.registry.frame(frame.id)).toBe(frame);
      expect(d.registry.frame(caller.id)).toBe(caller);
      expect(d.history.messages(thread.id)?.messages.map((m) => m.id)).toEqual(['h1']);
    });

    it('has what a delivered message needs once loadFor is done with it', async () => {
      const d = await fresh();
      const thread = d.registry.createThread();
      const frame = d.registry.openFrame(thread, 'worker', 'api', null);
      await d.store.loadFor(messageInto(thread, frame), false);
      await d.store.loadFor(messageInto(thread, frame), true);
      expect(d.registry.thread(thread.id)).toBe(thread);
      expect(d.registry.frame(frame.id)?.listener).toBe('worker');
    });

    it('leaves a thread nobody made unknown', async () => {
      const d = await fresh();
      await d.store.load('no-such-thread');
      await d.store.load('no-such-thread', 'no-such-frame', true);
      expect(d.registry.thread('no-such-thread')).toBeUndefined();
      expect(d.registry.frame('no-such-frame')).toBeUndefined();
    });

    it("brings in another daemon's thread exactly when it is shared", async () => {
      const a = await fresh();
      const b = await peer(a);
      const thread = a.registry.createThread();
      const frame = a.registry.openFrame(thread, 'worker', 'api', null);
      await a.flush();
      await b.store.loadFor(messageInto(thread, frame), false);
      expect(b.registry.thread(thread.id) !== undefined).toBe(harness.shared);
      expect(b.registry.frame(frame.id) !== undefined).toBe(harness.shared);
    });

    it('takes watch on and off, and close twice', async () => {
      const d = await fresh();
      const thread = d.registry.createThread();
      d.store.watch(thread.id, true);
      d.store.watch(thread.id, false);
      await d.flush();
      await d.store.close();
      await d.store.close();
    });

    if (harness.shared) {
      it('counts in flight across daemons: the last settle, on whichever daemon, answers 0', async () => {
        const a = await fresh();
        const b = await peer(a);
        const thread = a.registry.createThread();
        const store = (d: StoreDaemon) => {
          if (!d.store.shared) throw new Error('a shared harness made a local store');
          return d.store;
        };
        store(a).published(thread.id);
        store(a).published(thread.id);
        await a.flush();
        expect(await store(b).settled(thread.id)).toBe(1);
        expect(await store(a).settled(thread.id)).toBe(0);
      });
    }
  });
}
